"""Celery tasks of tunes: the driver (on the `tunes` queue) and its reconciler (beat).

Both are a line each over services/balance/tune/driver.py, which says how a tune survives
its driver's death. Tunes keep their state in the platform's Redis (REDIS_URL), apart
from Celery's broker.
"""

from __future__ import annotations

import redis
from celery import current_app, shared_task

from services.balance.tune import driver
from workers.app import STORE_CLUSTER, store_url


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
    return driver.drive(tune_id, store_url(), current_app, STORE_CLUSTER)


@shared_task(name="workers.tune.tasks.reconcile", ignore_result=True)
def reconcile() -> dict[str, list[str]]:
    """Beat: queue the driver again for every running tune whose driver's lease ran out."""
    return driver.reconcile(store_url(), current_app, STORE_CLUSTER)
