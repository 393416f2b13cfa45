"""The sweeps' and tunes' Redis store and Celery client, one pair per gateway process.

The blueprints need only a Redis URL: `app.config["SWEEPS_REDIS_URL"]`, else the
platform's settings (`app.extensions["cultists"].settings.redis_url`), else `$REDIS_URL`.
Chunk and driver tasks are sent by name through a light Celery client
(services.runtime.task_client), like the table tasks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from celery import Celery
from flask import current_app

from services.balance.sweeps.store import SweepStore
from services.runtime.redis_client import connect
from services.runtime.task_client import task_client


@dataclass
class BalanceClients:
    store: SweepStore
    celery: Celery


def _redis_url() -> str:
    url = current_app.config.get("SWEEPS_REDIS_URL")
    if url:
        return url
    platform = current_app.extensions.get("cultists")
    settings = getattr(platform, "settings", None)
    if settings is not None and getattr(settings, "redis_url", None):
        return settings.redis_url
    return os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")


def balance_clients() -> BalanceClients:
    clients = current_app.extensions.get("cultists.sweeps")
    if clients is None:
        url = _redis_url()
        settings = getattr(current_app.extensions.get("cultists"), "settings", None)
        cluster = bool(getattr(settings, "redis_cluster", False))
        broker = settings.task_broker_url if settings is not None else url
        store = SweepStore(connect(url, cluster))
        clients = BalanceClients(store, task_client(broker, "cultists-sweeps-client"))
        current_app.extensions["cultists.sweeps"] = clients
    return clients
