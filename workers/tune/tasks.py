"""Celery tasks of tunes: the driver (on the `tunes` queue) and its reconciler (beat).

Both are a line each over services/balance/tune/driver.py, which says how a tune survives
its driver's death; the broker is also the tunes' store (`broker_url`).
"""

from __future__ import annotations

import redis
from celery import current_app, shared_task

from services.balance.tune import driver


@shared_task(
    name=driver.DRIVE_TASK,
    ignore_result=True,
    autoretry_for=(redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
    max_retries=20,
)
def drive(tune_id: str) -> str:
    """Run one tune from its spec to its summary (retried on a lost Redis: the replay
    finds what was queued)."""
    return driver.drive(tune_id, current_app.conf.broker_url, current_app)


@shared_task(name="workers.tune.tasks.reconcile", ignore_result=True)
def reconcile() -> dict[str, list[str]]:
    """Beat: queue the driver again for every running tune whose driver's lease ran out."""
    return driver.reconcile(current_app.conf.broker_url, current_app)
