"""The worker class `celery worker` runs for this app: Celery's own, with one guarantee more.

When the consumer dies of an error Celery cannot recover from (kombu's Redis transport can
raise AttributeError on a connection a Redis restart tore down, kombu#582), Celery logs
"Unrecoverable error" and begins a warm shutdown that can hang for good inside the same
broken connection: a process that is alive but consumes nothing, which no supervisor
restarts because it never exits (seen in the chaos test, 1 run in 4). So once an exit
with a failure code is under way, the process ends within `CELERY_FAILURE_EXIT_SECONDS`
(default 15) whatever the shutdown waits on. Nothing is lost by it: tasks are
acknowledged only when done (acks_late), so an unfinished one goes back to its queue,
and `cultists run` (or Kubernetes) starts a fresh worker.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from celery.apps.worker import Worker as CeleryWorker

FAILURE_EXIT_SECONDS = float(os.environ.get("CELERY_FAILURE_EXIT_SECONDS", "15"))


class Worker(CeleryWorker):
    def stop(self, in_sighandler: bool = False, exitcode: Any = None) -> None:
        if exitcode not in (None, 0):
            _exit_after(FAILURE_EXIT_SECONDS, exitcode if isinstance(exitcode, int) else 1)
        super().stop(in_sighandler=in_sighandler, exitcode=exitcode)


def _exit_after(seconds: float, code: int) -> None:
    """A daemon timer: a shutdown that finishes in time exits first and it never fires."""
    timer = threading.Timer(seconds, os._exit, (code,))
    timer.daemon = True
    timer.start()
