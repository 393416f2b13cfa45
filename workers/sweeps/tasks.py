"""Celery tasks of balance sweeps: a line each over services/balance/sweeps/jobs.py.

Crash safety comes from the app's configuration (late acks, reject on worker loss,
prefetch 1: workers/app.py) together with idempotent results in jobs.py: a chunk's result
is keyed by its chunk id and stored at most once, so a chunk redelivered after its worker
was killed is simply played again and its second result is dropped. The broker is also
Sweeps keep their state in the platform's Redis (REDIS_URL, a Redis Cluster with
REDIS_CLUSTER=true), apart from Celery's broker (CELERY_BROKER_URL, workers/app.py).
"""

from __future__ import annotations

import functools
import os
import time

import redis
from celery import current_app, shared_task
from celery.signals import worker_process_shutdown, worker_ready

from services.balance.sweeps import control, jobs, metrics
from workers.app import STORE_CLUSTER, store_url


def _store():
    return jobs.store_for(store_url(), STORE_CLUSTER)


@functools.cache
def _broker() -> redis.Redis:
    """The broker's own Redis, where queued chunks wait (the reconciler counts them)."""
    return redis.Redis.from_url(current_app.conf.broker_url)


@shared_task(
    name=control.CHUNK_TASK,
    ignore_result=True,
    autoretry_for=(redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
    max_retries=8,
)
def run_chunk(sweep_id: str, chunk_id: str) -> str:
    """Simulate one chunk and store its result once; queue the finish when it was the last.
    An ad hoc chunk gives way part-way when nightly chunks wait in the broker (control.py)."""
    return jobs.play_chunk(
        _store(), current_app, sweep_id, chunk_id, nightly_waiting=lambda: control.nightly_waiting(_broker())
    )


@shared_task(
    name=control.PLAN_TASK,
    ignore_result=True,
    autoretry_for=(redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
    max_retries=8,
)
def plan(sweep_id: str) -> str:
    """Plan a sweep submitted over HTTP and queue its chunks (a batch at a time, resumable)."""
    return control.plan(_store(), current_app, sweep_id)


@shared_task(name=control.FINISH_TASK, bind=True, ignore_result=True, max_retries=40)
def finish(self, sweep_id: str) -> str:
    """Aggregate a complete sweep (once; duplicates find the summary and stop)."""
    outcome = control.finish(_store(), sweep_id)
    if outcome == "busy":
        # Another finisher holds the lock, or one died holding it: look again later.
        raise self.retry(countdown=15)
    return outcome


@shared_task(name="workers.sweeps.tasks.reconcile", ignore_result=True)
def reconcile() -> dict[str, object]:
    """Beat, every SWEEP_RECONCILE_SECONDS: queue again what no worker will play."""
    return jobs.reconcile_pass(_store(), current_app, _broker())


@shared_task(name="workers.sweeps.tasks.run_nightly", ignore_result=True)
def run_nightly(games: int | None = None, day: int | None = None, poll: float = 60.0) -> list[str]:
    """Queue tonight's standard suite, then the task that judges the night once it is in."""
    day, ids = jobs.start_night(_store(), current_app, games, day)
    finish_night.apply_async(args=(day, ids), kwargs={"poll": poll, "queued": time.time()}, countdown=poll)
    return list(ids.values())


@shared_task(
    name="workers.sweeps.tasks.finish_night",
    bind=True,
    ignore_result=True,
    max_retries=None,
    autoretry_for=(redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
)
def finish_night(
    self, day: int, sweeps: dict[str, str], poll: float = 60.0, queued: float | None = None
) -> str:
    """Judge the night once its sweeps are in, looking again every `poll` seconds meanwhile
    (it holds no worker while it waits)."""
    night = jobs.judge_night(_store(), day, sweeps, queued)
    if night is None:
        raise self.retry(countdown=poll)
    return night


@worker_ready.connect
def _serve_metrics(sender=None, **_kwargs) -> None:
    """Serve /metrics from the worker's main process when WORKER_METRICS_PORT is set."""
    port = os.environ.get("WORKER_METRICS_PORT")
    if port:
        # Only a worker of the sweeps queue exports the sweep gauges (read from Redis), so a
        # tables worker's /metrics does not repeat them.
        metrics.serve(
            int(port), redis_url=store_url() if _consumes_sweeps(sender) else None, cluster=STORE_CLUSTER
        )


def _consumes_sweeps(consumer) -> bool:
    try:
        return control.QUEUE in consumer.app.amqp.queues.consume_from
    except AttributeError:  # not a worker consumer: export them
        return True


@worker_process_shutdown.connect
def _process_gone(pid=None, **_kwargs) -> None:
    metrics.process_exited(pid or os.getpid())
