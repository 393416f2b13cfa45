"""Kill the worker mid-sweep (SIGKILL to its whole process group), start another: the sweep
completes with every game counted exactly once.

The killed worker holds one unacknowledged chunk (late ack, prefetch 1). Redis would hand
it out again only after the hour-long visibility timeout; what brings it back is the
chunk's lease running out and beat's reconciler queueing it again (reconcile.py). Beat runs
here with the reconciler every second and 3-second leases.
"""

from __future__ import annotations

import time

from services.balance.sweeps import control
from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.spec import parse_spec
from tests.support.celery_worker import start_beat, start_worker, stop_worker

from .support import wait_for

FAST = {"SWEEP_RECONCILE_SECONDS": "1", "SWEEP_LEASE_SECONDS": "3"}
SPEC = {"game": "crazy_cultists", "seed": 9, "games": 240, "chunk": 30, "players": [4],
        "lineups": [{"hero": "heuristic", "field": "random"}]}  # fmt: skip


def test_killed_worker_loses_nothing_and_counts_nothing_twice(redis_url, store, celery_app, tmp_path):
    env = FAST
    spec = parse_spec(SPEC)
    first = start_worker(redis_url, queues="sweeps", concurrency=1, name="sweeps-doomed", extra_env=env)
    beat = start_beat(redis_url, tmp_path / "beat-schedule", extra_env=env)
    second = None
    try:
        try:
            sweep_id = control.submit(spec, store, celery_app)
            deadline = time.monotonic() + 60
            # Two chunks stored, and a third being played (its lease taken): kill now.
            while int(store.meta(sweep_id)["chunks_done"]) < 2 or not store.leases(sweep_id):
                assert time.monotonic() < deadline, store.meta(sweep_id)
                time.sleep(0.02)
        finally:
            stop_worker(first, hard=True)  # SIGKILL the process group, mid-chunk
        meta = store.meta(sweep_id)
        assert meta["status"] == "running" and int(meta["chunks_done"]) < int(meta["total_chunks"])
        # The chunk it was playing is held, unacknowledged, by the broker (kombu's `unacked` hash).
        assert store.r.hlen("unacked") >= 1

        second = start_worker(redis_url, queues="sweeps", concurrency=2, name="sweeps-heir", extra_env=env)
        assert wait_for(store, sweep_id, timeout=120) == "done", store.meta(sweep_id)
    finally:
        if second is not None:
            stop_worker(second)
        beat.terminate()
        beat.wait(timeout=30)
    # The held chunk came back through its lease, an hour before the visibility timeout.
    assert int(store.meta(sweep_id)["chunks_requeued"]) >= 1

    meta = store.meta(sweep_id)
    assert int(meta["games_done"]) == spec.total_games
    assert int(meta["chunks_done"]) == int(meta["total_chunks"]) == len(store.chunk_blobs(sweep_id))
    summary = store.summary(sweep_id)
    assert summary["aggregates"]["games_counted"] == spec.total_games
    # Exactly the games a clean run plays: none lost, none doubled.
    assert summary["aggregates"] == aggregate(spec, simulate_local(spec, processes=1))
