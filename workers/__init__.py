"""Celery workers: live-table upkeep (bot moves, deadlines) and balance sweeps."""
