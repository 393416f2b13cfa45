"""Celery tasks of tunes (queue `tunes`); the work itself is services/balance/tune/."""
