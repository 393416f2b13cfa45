"""The nightly is never stuck behind an ad hoc sweep: its chunks go at a higher priority.

An ad hoc sweep of many chunks is queued first, then a nightly one, and only then a worker
starts (one process): it plays the nightly's chunks first, so the nightly is done while the
ad hoc sweep has barely begun. Its own Redis database keeps other tests' messages out.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest

from services.balance.sweeps import control
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.store import SweepStore
from tests.support.celery_worker import client_app, start_worker, stop_worker

from .support import wait_for

# The ad hoc sweep's chunks are three search-bot games each (~0.4 s here), so the 0.1 s
# the test takes to see the nightly done lets at most one more of them finish. Random games
# no longer do: the compiled engines play a chunk of ten in a few milliseconds, and fifteen
# chunks could finish between two looks.
ADHOC = {
    "game": "trash_cult",
    "seed": 1,
    "games": 120,
    "chunk": 3,
    "players": [2],
    "lineups": ["ismcts:iterations=60"],
}
NIGHTLY = {"game": "trash_cult", "seed": 2, "games": 20, "chunk": 10, "players": [2], "lineups": ["random"]}


@contextlib.contextmanager
def _own_db(redis_url: str, db: int) -> Iterator[tuple[str, SweepStore, object]]:
    """A Redis database of the test's own (emptied before and after), its sweeps store,
    and a Celery app that queues there."""
    url = redis_url.rsplit("/", 1)[0] + f"/{db}"
    store = SweepStore.from_url(url)
    store.r.flushdb()
    with client_app(url) as app:
        yield url, store, app
    store.r.flushdb()
    store.r.close()


@pytest.fixture()
def own(redis_url: str) -> Iterator[tuple[str, SweepStore, object]]:
    with _own_db(redis_url, 8) as owned:
        yield owned


def test_nightly_chunks_overtake_a_queued_ad_hoc_sweep(own):
    url, store, app = own
    adhoc = control.submit(parse_spec(ADHOC), store, app)  # 40 chunks, queued first
    nightly = control.submit(parse_spec(NIGHTLY), store, app, kind="nightly")
    worker = start_worker(url, queues="sweeps", concurrency=1, name="sweeps-priority", point_shared=False)
    try:
        assert wait_for(store, nightly, timeout=120) == "done"
        # One process, prefetch 1: at most the chunk it held when the nightly's came first.
        assert int(store.meta(adhoc)["chunks_done"]) <= 2, store.meta(adhoc)
    finally:
        control.cancel(store, adhoc)
        stop_worker(worker)


# Chunks of many slow search-bot games: each would hold its process for minutes.
LONG_ADHOC = {
    "game": "trash_cult",
    "seed": 3,
    "games": 240,
    "chunk": 60,
    "players": [2],
    "lineups": ["ismcts:iterations=1000"],
}
# The bound on how long the nightly may wait: a stop poll and one decision of a search
# bot, plus a busy machine's slack; far under one LONG_ADHOC chunk.
NIGHTLY_BOUND_SECONDS = 45.0


@pytest.fixture()
def own_nine(redis_url: str) -> Iterator[tuple[str, SweepStore, object]]:
    with _own_db(redis_url, 9) as owned:
        yield owned


def test_long_ad_hoc_chunks_give_way_to_a_nightly_queued_while_they_run(own_nine):
    """Both processes of a worker are deep in long ad hoc chunks when a nightly is queued:
    the chunks stop part-way, queue themselves again and free the processes, so the
    nightly is done within NIGHTLY_BOUND_SECONDS, while no ad hoc chunk had finished."""
    url, store, app = own_nine
    adhoc = control.submit(parse_spec(LONG_ADHOC), store, app)  # 4 chunks
    worker = start_worker(url, queues="sweeps", concurrency=2, name="sweeps-yield", point_shared=False)
    try:
        deadline = time.monotonic() + 120
        while len(store.leases(adhoc)) < 2:  # both processes hold an ad hoc chunk
            assert time.monotonic() < deadline, f"the ad hoc chunks never started: {store.meta(adhoc)}"
            time.sleep(0.2)
        time.sleep(2.0)  # well inside their games
        queued = time.monotonic()
        nightly = control.submit(parse_spec(NIGHTLY), store, app, kind="nightly")
        assert wait_for(store, nightly, timeout=NIGHTLY_BOUND_SECONDS) == "done"
        waited = time.monotonic() - queued
        meta = store.meta(adhoc)
        assert int(meta["chunks_done"]) == 0, (meta, waited)  # it did not wait for one to end
        assert int(meta.get("chunks_yielded", 0)) >= 1, meta
        # The yielded chunks come back: their processes take them up again.
        deadline = time.monotonic() + 60
        while len(store.leases(adhoc)) < 2:
            assert time.monotonic() < deadline, (
                f"the yielded chunks were not played again: {store.meta(adhoc)}"
            )
            time.sleep(0.2)
    finally:
        control.cancel(store, adhoc)
        stop_worker(worker)


def test_a_chunk_that_gave_way_keeps_its_games_in_redis_and_plays_on(own, monkeypatch):
    """jobs.play_chunk over real Redis: a chunk told a nightly waits part-way stores the
    games it finished, is queued again, and its next run plays only the rest; the stored
    chunk is the one an unbroken run makes, and the kept games are dropped with it.
    Asked at every decision (poll 0), so where it stops is fixed by the seed."""
    from services.balance.sweeps import jobs, simulate
    from services.balance.sweeps.plan import chunks
    from services.balance.sweeps.simulate import simulate_chunk, unpack

    monkeypatch.setattr(simulate, "STOP_POLL_SECONDS", 0.0)
    _url, store, app = own
    spec = parse_spec({"game": "trash_cult", "seed": 5, "games": 12, "chunk": 12, "players": [2],
                       "lineups": ["random"]})  # fmt: skip
    sweep = control.submit(spec, store, app)
    (chunk,) = chunks(spec)
    asked = {"n": 0}

    def nightly_after_a_while() -> bool:  # a nightly arrives after some games are in
        asked["n"] += 1
        return asked["n"] > 5000  # about four games in (~1,300 decisions each)

    assert jobs.play_chunk(store, app, sweep, chunk.id, nightly_waiting=nightly_after_a_while) == "yielded"
    kept = store.progress_of(sweep, chunk.id)
    assert kept is not None and 0 < len(unpack(kept)["winners"]) < chunk.games, "stopped mid-chunk"
    assert int(store.meta(sweep)["chunks_yielded"]) == 1 and not store.has_chunk(sweep, chunk.id)
    again = {"n": 0}

    def no_nightly() -> bool:
        again["n"] += 1
        return False

    assert jobs.play_chunk(store, app, sweep, chunk.id, nightly_waiting=no_nightly) == "stored"
    unbroken = {"n": 0}

    def counted() -> bool:
        unbroken["n"] += 1
        return False

    whole = simulate_chunk(spec, chunk, should_stop=counted, poll_seconds=0)
    assert whole is not None
    # The second run asked only for the games left: the kept ones were not played again.
    assert again["n"] < unbroken["n"] - 1000, (again, unbroken)
    stored = unpack(store.chunk_blob(sweep, chunk.id))
    assert {k: v for k, v in stored.items() if k != "seconds"} == {
        k: v for k, v in whole.items() if k != "seconds"
    }
    assert store.progress_of(sweep, chunk.id) is None
