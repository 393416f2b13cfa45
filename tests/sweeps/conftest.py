"""Sweep fixtures: a real Celery worker on the `sweeps` queue, with its metrics endpoint.

The worker is module-scoped: a module that needs one gets its own and stops it when the
module ends, so the crash test (which starts and kills its own workers) never shares the
queue with a worker it does not control.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.balance.sweeps.store import SweepStore
from services.runtime.ports import free_port, wait_for_port
from tests.support.celery_worker import start_worker, stop_worker


@dataclass
class Worker:
    proc: subprocess.Popen
    metrics_port: int
    reports: Path  # where the worker writes nightly reports
    nights: Path  # where the worker stores the nights it judged (CULTISTS_NIGHTLY_DIR)
    records: Path  # where it writes every finished sweep's per-game records (CULTISTS_RECORDS_DIR)


@pytest.fixture(scope="module")
def sweep_worker(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    """`celery worker -Q sweeps -c 2` in multiprocess metrics mode, serving /metrics."""
    port = free_port()
    reports = tmp_path_factory.mktemp("nightly-reports")
    env = {
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path_factory.mktemp("prom")),
        "WORKER_METRICS_PORT": str(port),
        "CULTISTS_SWEEPS_DIR": str(reports),
        "CULTISTS_NIGHTLY_DIR": str(reports / "nights"),
        "CULTISTS_RECORDS_DIR": str(reports / "records"),
    }
    proc = start_worker(redis_url, queues="sweeps", concurrency=2, name="sweeps", extra_env=env)
    wait_for_port(port, timeout=30)
    yield Worker(proc, port, reports, reports / "nights", reports / "records")
    stop_worker(proc)


@pytest.fixture()
def store(redis_url: str) -> Iterator[SweepStore]:
    s = SweepStore.from_url(redis_url)
    yield s
    s.r.close()


@pytest.fixture()
def celery_app(redis_url: str):
    """The shared app, pointed at the test Redis (start_worker does the same)."""
    from workers.app import app

    app.conf.broker_url = app.conf.result_backend = redis_url
    return app
