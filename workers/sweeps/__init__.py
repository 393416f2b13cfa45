"""Celery tasks of balance sweeps (queue `sweeps`); the work itself is services/balance/sweeps/."""
