"""The one Celery app (Redis as broker and result store; architecture decision 10).

Crash safety is configuration, not code: tasks are acknowledged only after they finish
(`acks_late`) and requeued if the worker process dies (`reject_on_worker_lost`), and each
worker process takes one task at a time (`prefetch 1`), so a killed worker loses nothing
and holds nothing back. Task modules make their results idempotent, so a requeued task
never counts twice.

Three queues keep the kinds of work apart: `tables` (bot moves and deadlines of live
matches: short, latency-sensitive), `sweeps` (long simulation chunks) and `tunes` (a
tune's driver, which mostly waits on the sweeps it queues: workers/tune/tasks.py).
"""

from __future__ import annotations

import os
from functools import cached_property

from celery import Celery
from celery.schedules import crontab

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
# The broker has its own URL (architecture decision 10): a plain Redis, or any broker Celery
# supports. Outside cluster mode it defaults to the platform's Redis; a Redis Cluster (the
# live-play store, REDIS_CLUSTER=true) cannot be Celery's broker, so it then must be set.
BROKER_URL = os.environ.get("CELERY_BROKER_URL") or REDIS_URL
# Sweeps and tunes keep their state in the platform's Redis (REDIS_URL), one server or a
# Redis Cluster (REDIS_CLUSTER=true).
STORE_CLUSTER = os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes")


def store_url() -> str:
    """The platform's Redis: REDIS_URL, else (no environment, as in a test driving tasks in
    its own process) the broker the app was pointed at."""
    return os.environ.get("REDIS_URL") or app.conf.broker_url


# How long Redis waits before handing an unacknowledged task (its worker died) to another
# worker: one hour, longer than any chunk runs, so a slow chunk is never handed out while
# it still runs. Lost sweep chunks come back much sooner through leases and the reconciler
# (services/balance/sweeps/reconcile.py); this is the backstop. Results are idempotent by task key,
# so a redelivery can only cost repeated work, never a double count.
VISIBILITY_TIMEOUT = int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600"))
# How often beat looks for lost sweep chunks and finish tasks (reconcile.py).
RECONCILE_SECONDS = float(os.environ.get("SWEEP_RECONCILE_SECONDS", "30"))
# How often beat refiles live tables whose index entries a crash cut off (platform store).
TABLES_RECONCILE_SECONDS = float(os.environ.get("TABLES_RECONCILE_SECONDS", "10"))
# How often beat moves finished tables past their grace period to the archive.
TABLES_ARCHIVE_SECONDS = float(os.environ.get("TABLES_ARCHIVE_SECONDS", "60"))


class CultistsCelery(Celery):
    """Celery whose `celery worker` runs workers/worker.py's Worker: a worker that hits an
    unrecoverable error exits (and is restarted) instead of hanging in its shutdown."""

    @cached_property
    def Worker(self) -> type:
        # A "module:name" string is what Celery itself passes here; celery-types wants a class.
        return self.subclass_with_self("workers.worker:Worker")  # type: ignore[arg-type]


app = CultistsCelery(
    "cultists",
    broker=BROKER_URL,
    backend=BROKER_URL,
    include=["workers.tables", "workers.sweeps.tasks", "workers.tune.tasks"],
)

app.conf.update(
    task_acks_late=True,
    task_reject_on_worker_lost=True,
    worker_prefetch_multiplier=1,
    task_serializer="json",
    result_serializer="json",
    accept_content=["json"],
    result_expires=7 * 24 * 3600,
    broker_connection_retry_on_startup=True,
    # Redis down for a while (restarting, failing over) must not end a worker: keep
    # reconnecting for as long as it takes (the default gives up after 100 tries).
    broker_connection_max_retries=None,
    # A running worker also takes back a dead worker's messages (by default only a worker
    # that starts does), checking every few seconds once the visibility timeout is past.
    broker_transport_options={
        "visibility_timeout": VISIBILITY_TIMEOUT,
        "unacked_restore_interval": 5,
        "unacked_restore_throttle": 1,
    },
    result_backend_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT},
    task_default_queue="sweeps",
    task_routes={
        "workers.tables.*": {"queue": "tables"},
        "workers.sweeps.*": {"queue": "sweeps"},
        "workers.tune.tasks.drive": {"queue": "tunes"},
        "workers.tune.tasks.reconcile": {"queue": "sweeps"},
    },
    timezone="UTC",
    beat_schedule={
        # Deadlines of live tables live in Redis; this sweep enforces the due ones (issue 6).
        "enforce-table-deadlines": {"task": "workers.tables.enforce_deadlines", "schedule": 1.0},
        # Tables whose index entries a crash cut off refiled (services/platform/store.py).
        "reconcile-tables": {
            "task": "workers.tables.reconcile",
            "schedule": TABLES_RECONCILE_SECONDS,
            "options": {"expires": TABLES_RECONCILE_SECONDS},
        },
        # Finished tables past their grace period leave Redis (services/platform/archive.py).
        "archive-tables": {
            "task": "workers.tables.archive",
            "schedule": TABLES_ARCHIVE_SECONDS,
            "options": {"expires": TABLES_ARCHIVE_SECONDS},
        },
        # Lost chunks of running sweeps queued again; lost finish tasks sent again (issue 13).
        "reconcile-sweeps": {
            "task": "workers.sweeps.tasks.reconcile",
            "schedule": RECONCILE_SECONDS,
            "options": {"priority": 0, "expires": RECONCILE_SECONDS},
        },
        # Tunes whose driver died queued again; the new driver resumes (workers/tune/tasks.py).
        "reconcile-tunes": {
            "task": "workers.tune.tasks.reconcile",
            "schedule": RECONCILE_SECONDS,
            "options": {"priority": 0, "expires": RECONCILE_SECONDS},
        },
        # The standard balance suite, compared with the night before (issue 8).
        "nightly-balance-suite": {
            "task": "workers.sweeps.tasks.run_nightly",
            "schedule": crontab(hour=2, minute=0),
        },
    },
)
