"""Gateway fixtures: the real Flask app on real Redis and real engine gRPC servers, and a
real Celery worker on the `tables` queue for bot seats and deadlines. No mocks.

Every test of this package that touches live play runs twice: on one Redis, and on a real
3-master Redis Cluster (issue 28's promise: the same code, the same behaviour). `live_store`
is package-scoped and parametrized, so pytest runs the whole package on one, then on the
other, starting the workers once for each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import redis

from services.balance.sweeps.control import QUEUE as SWEEP_QUEUE
from services.balance.sweeps.store import PREFIX as SWEEP_PREFIX
from services.balance.tune.driver import QUEUE as TUNE_QUEUE
from services.balance.tune.store import PREFIX as TUNE_PREFIX
from services.gateway import create_app
from services.platform.settings import Settings
from services.runtime.broker import queue_keys
from services.runtime.embedded_cluster import EmbeddedCluster, start_cluster
from tests.support.celery_worker import ROOT, start_worker, stop_worker

# The worker's timing, short so timer tests take seconds: a timed-out seat's next
# decisions wait AWAY_SECONDS, a bot seat whose task got lost BOT_GRACE_SECONDS.
AWAY_SECONDS = 0.3
BOT_GRACE_SECONDS = 1.0


def engine_env(engines: dict) -> dict[str, str]:
    return {f"ENGINE_ADDR_{g.upper()}": f"127.0.0.1:{e.port}" for g, e in engines.items()}


@dataclass(frozen=True)
class LiveStore:
    """Where live play keeps its tables: one Redis, or a cluster (then Celery's broker is
    the session's plain Redis, as a deployment would have it), and the folder every process
    shares for archived tables and live tables' sealed log blocks (log_blocks.py: a
    gateway and a tables worker must read each other's; empty: each process's default)."""

    kind: str
    url: str
    cluster: bool
    broker_url: str
    archive_dir: str = ""

    def env(self) -> dict[str, str]:
        """What a worker or gunicorn process is started with to use this store."""
        return {
            "REDIS_URL": self.url,
            "REDIS_CLUSTER": "true" if self.cluster else "",
            "CELERY_BROKER_URL": self.broker_url,
            **({"CULTISTS_ARCHIVE_DIR": self.archive_dir} if self.archive_dir else {}),
        }


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[EmbeddedCluster]:
    cluster = start_cluster(3)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="package", params=["single", "cluster"])
def live_store(request, redis_url: str, tmp_path_factory) -> LiveStore:
    archive = str(tmp_path_factory.mktemp(f"archive-{request.param}"))
    if request.param == "single":
        return LiveStore("single", redis_url, False, redis_url, archive)
    cluster = request.getfixturevalue("redis_cluster")
    return LiveStore("cluster", cluster.url, True, redis_url, archive)


@pytest.fixture(scope="package")
def gateway_settings(live_store: LiveStore, engines: dict) -> Settings:
    return Settings(
        archive_dir=live_store.archive_dir,
        redis_url=live_store.url,
        redis_cluster=live_store.cluster,
        broker_url=live_store.broker_url,
        engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()},
        bot_grace_seconds=BOT_GRACE_SECONDS,
        away_seconds=AWAY_SECONDS,
        # Tests play whole games from one address as fast as they can; the limits have
        # their own tests (test_abuse.py) on an app of their own.
        rate_limit_address="",
        rate_limit_player="",
        rate_limit_guest="",
        max_waiting_tables=0,  # tests open tables by the dozen from 127.0.0.1; test_limits.py caps them
    )


def forget_gateway_keys(client, broker_url: str) -> None:
    """Tables, tickets and ratings (gw:*), and sweeps and tunes (their APIs are the gateway's
    too); one key at a time, which a cluster takes as well."""
    for key in client.scan_iter("gw:*", count=1000):
        client.delete(key)
    forget_sweeps_and_tunes(client, redis.Redis.from_url(broker_url))


def forget_sweeps_and_tunes(client, broker=None) -> None:
    """Sweeps and tunes, and the tasks their APIs queued (on `broker`, else `client`): no
    worker here runs them, and a later package's workers (tests/sweeps) must not be
    handed chunks of sweeps now gone."""
    for pattern in (f"{SWEEP_PREFIX}*", f"{TUNE_PREFIX}*", "cultists:{sweeps}*", "cultists:{tunes}*"):
        for key in client.scan_iter(pattern, count=1000):
            client.delete(key)
    for queue in (SWEEP_QUEUE, TUNE_QUEUE):
        (broker or client).delete(*queue_keys(queue))


@pytest.fixture()
def app(gateway_settings: Settings):
    """A fresh app on a Redis without gateway keys. Only our keys are cleared, not the whole
    database: a flush would also drop the queue bindings the running worker relies on."""
    app = create_app(gateway_settings)
    gw = app.extensions["cultists"]
    forget_gateway_keys(gw.redis, gateway_settings.task_broker_url)
    yield app
    forget_gateway_keys(gw.redis, gateway_settings.task_broker_url)
    gw.close()


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(scope="package")
def table_worker(
    live_store: LiveStore, engines: dict, gateway_settings: Settings
) -> Iterator[subprocess.Popen]:
    """A real `celery worker -Q tables,bots` pointed at the in-process engines (one worker
    for both queues: the humans' tasks still come first, by priority)."""
    env = {
        **live_store.env(),
        **engine_env(engines),
        "GATEWAY_AWAY_SECONDS": str(AWAY_SECONDS),
        "GATEWAY_BOT_GRACE_SECONDS": str(BOT_GRACE_SECONDS),
        "MATCH_FILL_WITH_BOTS_AFTER": "2",
    }
    proc = start_worker(
        live_store.broker_url, queues="tables,bots", concurrency=2, name="gateway-tables", extra_env=env
    )
    yield proc
    stop_worker(proc)


@pytest.fixture(scope="package")
def beat(live_store: LiveStore, table_worker) -> Iterator[subprocess.Popen]:
    """Real celery beat: sends `workers.tables.enforce_deadlines` every second."""
    workdir = tempfile.mkdtemp(prefix="cultists-beat-")
    log = open(os.path.join(workdir, "beat.log"), "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "-s", os.path.join(workdir, "schedule"),
         "--loglevel", "INFO"],
        cwd=ROOT, env={**os.environ, **live_store.env()}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    yield proc
    stop_worker(proc)
    log.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
