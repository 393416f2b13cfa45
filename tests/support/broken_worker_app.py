"""A Celery app of the platform's own class whose worker breaks the way kombu's Redis
transport can after a Redis restart: an error the worker cannot recover from, followed by
a shutdown that never finishes. Used by tests/runtime/test_worker_exit.py."""

from __future__ import annotations

import os
import threading

from celery import bootsteps

from workers.app import CultistsCelery

app = CultistsCelery("broken", broker=os.environ["REDIS_URL"], backend=os.environ["REDIS_URL"])


class StuckShutdown(bootsteps.StartStopStep):
    """Starts fine and hangs in its stop, as a shutdown stuck in a torn-down connection does."""

    def start(self, worker) -> None:
        pass

    def stop(self, worker) -> None:
        threading.Event().wait()


class BrokenConnection(bootsteps.StartStopStep):
    """The consumer fails with an error that is not a connection error: Celery logs
    "Unrecoverable error" and stops the worker, which runs StuckShutdown's stop."""

    def start(self, consumer) -> None:
        raise RuntimeError("the broker connection broke")


app.steps["worker"].add(StuckShutdown)
app.steps["consumer"].add(BrokenConnection)
