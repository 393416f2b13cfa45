"""The nightly is never stuck behind an ad hoc sweep: its chunks go at a higher priority.

An ad hoc sweep of many chunks is queued first, then a nightly one, and only then a worker
starts (one process): it plays the nightly's chunks first, so the nightly is done while the
ad hoc sweep has barely begun. Its own Redis database keeps other tests' messages out.
"""

from __future__ import annotations

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


@pytest.fixture()
def own(redis_url: str) -> Iterator[tuple[str, SweepStore, object]]:
    url = redis_url.rsplit("/", 1)[0] + "/8"
    store = SweepStore.from_url(url)
    store.r.flushdb()
    with client_app(url) as app:
        yield url, store, app
    store.r.flushdb()
    store.r.close()


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
