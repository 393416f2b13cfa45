"""A light Celery client that queues tasks by name, for processes that run no task code.

The gateway (table moves, sweeps, tunes) and the CLI send `workers.*` tasks by name to the
broker the workers listen on; they need Celery's producer, not the worker's task modules.
Only the processes at the top of the layers (gateway, CLI) build one and hand it down:
the live-play and balance packages below take any object with `send_task`.
"""

from __future__ import annotations

from celery import Celery


def task_client(broker_url: str, name: str = "cultists-client") -> Celery:
    client = Celery(name, broker=broker_url, set_as_current=False)
    client.conf.broker_connection_retry_on_startup = True
    return client
