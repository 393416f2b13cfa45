"""Gateway fixtures: the real Flask app on real Redis and real engine gRPC servers, and a
real Celery worker on the `tables` queue for bot seats and deadlines. No mocks."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest
from kombu.transport.redis import PRIORITY_STEPS, Channel

from services.balance.sweeps.control import QUEUE as SWEEP_QUEUE
from services.balance.sweeps.store import PREFIX as SWEEP_PREFIX
from services.balance.tune.driver import QUEUE as TUNE_QUEUE
from services.balance.tune.store import PREFIX as TUNE_PREFIX
from services.gateway import create_app
from services.platform.settings import Settings
from tests.support.celery_worker import ROOT, start_worker, stop_worker

# The worker's timing, short so timer tests take seconds: a timed-out seat's next
# decisions wait AWAY_SECONDS, a bot seat whose task got lost BOT_GRACE_SECONDS.
AWAY_SECONDS = 0.3
BOT_GRACE_SECONDS = 1.0


def engine_env(engines: dict) -> dict[str, str]:
    return {f"ENGINE_ADDR_{g.upper()}": f"127.0.0.1:{e.port}" for g, e in engines.items()}


@pytest.fixture(scope="package")
def gateway_settings(redis_url: str, engines: dict) -> Settings:
    return Settings(
        redis_url=redis_url,
        engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()},
        bot_grace_seconds=BOT_GRACE_SECONDS,
        away_seconds=AWAY_SECONDS,
        # Tests play whole games from one address as fast as they can; the limits have
        # their own tests (test_abuse.py) on an app of their own.
        rate_limit_address="",
        rate_limit_player="",
    )


def forget_gateway_keys(client) -> None:
    """Tables, tickets and ratings (gw:*), and sweeps and tunes (their APIs are the gateway's too)."""
    for key in client.scan_iter("gw:*", count=1000):
        client.delete(key)
    forget_sweeps_and_tunes(client)


def forget_sweeps_and_tunes(client) -> None:
    """Sweeps and tunes, and the tasks their APIs queued: no worker here runs them, and a
    later package's workers (tests/sweeps) must not be handed chunks of sweeps now gone."""
    for pattern in (f"{SWEEP_PREFIX}*", f"{TUNE_PREFIX}*"):
        for key in client.scan_iter(pattern, count=1000):
            client.delete(key)
    for queue in (SWEEP_QUEUE, TUNE_QUEUE):
        client.delete(*(f"{queue}{Channel.sep}{step}" if step else queue for step in PRIORITY_STEPS))


@pytest.fixture()
def app(gateway_settings: Settings):
    """A fresh app on a Redis without gateway keys. Only our keys are cleared, not the whole
    database: a flush would also drop the queue bindings the running worker relies on."""
    app = create_app(gateway_settings)
    gw = app.extensions["cultists"]
    forget_gateway_keys(gw.redis)
    yield app
    forget_gateway_keys(gw.redis)
    gw.close()


@pytest.fixture()
def client(app):
    return app.test_client()


@pytest.fixture(scope="package")
def table_worker(redis_url: str, engines: dict) -> Iterator[subprocess.Popen]:
    """A real `celery worker -Q tables` pointed at the in-process engines."""
    env = {
        **engine_env(engines),
        "GATEWAY_AWAY_SECONDS": str(AWAY_SECONDS),
        "GATEWAY_BOT_GRACE_SECONDS": str(BOT_GRACE_SECONDS),
        "MATCH_FILL_WITH_BOTS_AFTER": "2",
    }
    proc = start_worker(redis_url, queues="tables", concurrency=2, name="gateway-tables", extra_env=env)
    yield proc
    stop_worker(proc)


@pytest.fixture(scope="package")
def beat(redis_url: str, table_worker) -> Iterator[subprocess.Popen]:
    """Real celery beat: sends `workers.tables.enforce_deadlines` every second."""
    workdir = tempfile.mkdtemp(prefix="cultists-beat-")
    log = open(os.path.join(workdir, "beat.log"), "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "-s", os.path.join(workdir, "schedule"),
         "--loglevel", "INFO"],
        cwd=ROOT, env={**os.environ, "REDIS_URL": redis_url}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    yield proc
    stop_worker(proc)
    log.close()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
