"""Faults mid-sweep that nobody repairs by hand: the sweep still finishes, every seed counted once.

Each test runs its own Redis (append-only file on, as in production), a real worker and a
real `celery beat` that runs the reconciler every second, with short leases so the test does
not wait a minute for a lease to run out. After the fault nothing is done by the test but
wait (and, where a process died, start another one, as the supervisor or Kubernetes would).
The result is compared with a clean local run of the same plan: equal aggregates mean no
game lost and none counted twice.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from services.balance.sweeps import control
from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.store import SweepStore
from services.runtime.embedded_redis import EmbeddedRedis, start_redis
from services.runtime.ports import free_port
from tests.support.celery_worker import ROOT, client_app, start_beat, start_worker, stop_worker

from .support import wait_for

FAST = {"SWEEP_RECONCILE_SECONDS": "1", "SWEEP_LEASE_SECONDS": "3", "SWEEP_STORE_PATIENCE_SECONDS": "2"}
SPEC = {"game": "crazy_cultists", "seed": 31, "games": 160, "chunk": 16, "players": [4],
        "lineups": ["random"]}  # fmt: skip


@pytest.fixture()
def redis_aof(tmp_path: Path) -> Iterator[tuple[EmbeddedRedis, Path]]:
    data = tmp_path / "redis"
    data.mkdir()
    server = start_redis(port=free_port(), persist=True, data_dir=data)
    holder = [server]
    yield holder, data
    holder[0].stop()


@pytest.fixture()
def app_on(redis_aof):
    """A client app on this test's Redis (the shared one stays on the session's)."""
    holder, _data = redis_aof
    with client_app(holder[0].url) as app:
        yield app


def _wait_chunks(store: SweepStore, sweep_id: str, at_least: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while int(store.meta(sweep_id)["chunks_done"]) < at_least:
        assert time.monotonic() < deadline, store.meta(sweep_id)
        time.sleep(0.05)


def _counted_once(store: SweepStore, sweep_id: str, spec) -> None:
    meta = store.meta(sweep_id)
    assert int(meta["games_done"]) == spec.total_games
    assert int(meta["chunks_done"]) == int(meta["total_chunks"]) == len(store.chunk_ids(sweep_id))
    summary = store.summary(sweep_id)
    assert summary["aggregates"]["games_counted"] == spec.total_games
    assert summary["aggregates"] == aggregate(spec, simulate_local(spec, processes=1))


def _status(store: SweepStore, sweep_id: str) -> str | None:
    """The sweep's status, or None while the restarted Redis still loads its file or a
    pooled socket from before the kill fails once (the test's reading, not the platform's)."""
    try:
        return store.status(sweep_id)
    except redis.ConnectionError:
        return None


def test_redis_killed_and_restarted_mid_sweep_the_sweep_finishes_and_follow_survives(
    redis_aof, app_on, tmp_path
):
    holder, data = redis_aof
    url = holder[0].url
    port = holder[0].port
    spec = parse_spec(SPEC)
    store = SweepStore.from_url(url)
    worker = start_worker(
        url, queues="sweeps", concurrency=2, name="sweeps-redis-fault", extra_env=FAST, point_shared=False
    )
    beat = start_beat(url, tmp_path / "beat-schedule", extra_env=FAST)
    follower = None
    try:
        sweep_id = control.submit(spec, store, app_on)
        out = tmp_path / "report"
        follower = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "sweep", "--follow", sweep_id, "--out", str(out)],
            cwd=ROOT, env={**os.environ, "REDIS_URL": url}, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        _wait_chunks(store, sweep_id, 2)
        holder[0].process.kill()  # SIGKILL: no goodbye, chunks in flight
        holder[0].process.wait()
        time.sleep(1.5)
        holder[0] = start_redis(port=port, persist=True, data_dir=data)  # same data, same port
        # The worker may exit on the lost connection (a kombu bug while it restores its
        # unacked messages to a Redis that is away); its supervisor starts it again, and
        # leases and the reconciler recover what it held. Do what the supervisor does.
        store.r.connection_pool.disconnect()  # this test's own sockets died with the old server
        deadline = time.monotonic() + 180
        while _status(store, sweep_id) != "done":
            assert time.monotonic() < deadline, store.meta(sweep_id)
            if worker.poll() is not None:
                with contextlib.suppress(ProcessLookupError):  # its orphaned pool, if any
                    os.killpg(worker.pid, signal.SIGKILL)
                worker = start_worker(url, queues="sweeps", concurrency=2, name="sweeps-restarted",
                                      extra_env=FAST, point_shared=False)  # fmt: skip
            time.sleep(0.2)
        _counted_once(store, sweep_id, spec)
        _out, err = follower.communicate(timeout=120)
        assert follower.returncode == 0, err
        assert "Traceback" not in err
        assert (out / "report.html").exists()
    finally:
        if follower is not None and follower.poll() is None:
            follower.kill()
        beat.terminate()
        beat.wait(timeout=30)
        stop_worker(worker, hard=True)
        store.r.close()


def test_worker_main_process_killed_mid_sweep_the_sweep_finishes(redis_aof, app_on, tmp_path):
    holder, _data = redis_aof
    url = holder[0].url
    spec = parse_spec(SPEC)
    store = SweepStore.from_url(url)
    doomed = start_worker(
        url, queues="sweeps", concurrency=2, name="sweeps-main-killed", extra_env=FAST, point_shared=False
    )
    beat = start_beat(url, tmp_path / "beat-schedule", extra_env=FAST)
    heir = None
    try:
        sweep_id = control.submit(spec, store, app_on)
        _wait_chunks(store, sweep_id, 2)
        os.kill(doomed.pid, signal.SIGKILL)  # the main process only: its pool is orphaned
        doomed.wait()
        # What the supervisor does: start a worker again. Its messages are held (unacked)
        # for the hour-long visibility timeout; leases and the reconciler bring them back.
        heir = start_worker(
            url, queues="sweeps", concurrency=2, name="sweeps-heir", extra_env=FAST, point_shared=False
        )
        assert wait_for(store, sweep_id, timeout=180) == "done", store.meta(sweep_id)
        _counted_once(store, sweep_id, spec)
    finally:
        beat.terminate()
        beat.wait(timeout=30)
        if heir is not None:
            stop_worker(heir)
        with contextlib.suppress(ProcessLookupError):  # the orphaned pool processes, if any remain
            os.killpg(doomed.pid, signal.SIGKILL)
        store.r.close()
