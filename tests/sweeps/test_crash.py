"""Kill the worker mid-sweep (SIGKILL to its whole process group), start another: the sweep
completes with every game counted exactly once.

The killed worker holds one unacknowledged chunk (late ack, prefetch 1). Redis hands it
out again once the visibility timeout has passed, which the next worker checks when it
starts; the timeout is shortened to a few seconds for these workers only.
"""

from __future__ import annotations

import time

from tests.support.celery_worker import start_worker, stop_worker
from workers.sweeps import control
from workers.sweeps.aggregate import aggregate
from workers.sweeps.local import simulate_local
from workers.sweeps.spec import parse_spec

from .support import wait_for

VISIBILITY = 3
SPEC = {"game": "crazy_cultists", "seed": 9, "games": 240, "chunk": 30, "players": [4],
        "lineups": [{"hero": "heuristic", "field": "random"}]}  # fmt: skip


def test_killed_worker_loses_nothing_and_counts_nothing_twice(redis_url, store, celery_app):
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY)}
    spec = parse_spec(SPEC)
    first = start_worker(redis_url, queues="sweeps", concurrency=1, name="sweeps-doomed", extra_env=env)
    try:
        sweep_id = control.submit(spec, store, celery_app)
        deadline = time.monotonic() + 60
        while int(store.meta(sweep_id)["chunks_done"]) < 2:
            assert time.monotonic() < deadline, store.meta(sweep_id)
            time.sleep(0.02)
    finally:
        stop_worker(first, hard=True)  # SIGKILL the process group, mid-chunk
    killed_at = time.monotonic()
    meta = store.meta(sweep_id)
    assert meta["status"] == "running" and int(meta["chunks_done"]) < int(meta["total_chunks"])
    # The chunk it was playing is held, unacknowledged, by the broker (kombu's `unacked` hash).
    assert store.r.hlen("unacked") >= 1

    time.sleep(max(0.0, VISIBILITY + 0.5 - (time.monotonic() - killed_at)))
    second = start_worker(redis_url, queues="sweeps", concurrency=2, name="sweeps-heir", extra_env=env)
    try:
        assert wait_for(store, sweep_id, timeout=120) == "done", store.meta(sweep_id)
    finally:
        stop_worker(second)

    meta = store.meta(sweep_id)
    assert int(meta["games_done"]) == spec.total_games
    assert int(meta["chunks_done"]) == int(meta["total_chunks"]) == len(store.chunk_blobs(sweep_id))
    summary = store.summary(sweep_id)
    assert summary["aggregates"]["games_counted"] == spec.total_games
    # Exactly the games a clean run plays: none lost, none doubled.
    assert summary["aggregates"] == aggregate(spec, simulate_local(spec, processes=1))
