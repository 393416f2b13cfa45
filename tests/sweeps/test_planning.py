"""A sweep submitted over HTTP is planned by a worker, and a cancel stops a game mid-way.

On a Redis database of the module's own (no other test's messages or workers), the
sweeps blueprint answers a 4,000-chunk submit with 202 while one message, its planner, is
all that is queued: no chunk was planned in the request. A real Celery worker then plans
it, the progress's `planned_percent` reaching 100 with every chunk queued.

Then a sweep of one game whose bots search for minutes: cancelled while that game is
being played, its worker stops within a few seconds (the chunk's lease is dropped, nothing
stored), not at the end of the game.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
import redis
from flask import Flask

from services.balance.sweeps import control
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.store import SweepStore, key
from services.gateway import errors, sweeps_api
from services.runtime.broker import queue_keys
from tests.support.celery_worker import ROOT, client_app, start_worker, stop_worker
from tests.support.staff import act_as

from .support import wait_for

BIG = {"game": "trash_cult", "seed": 3, "games": 4000, "chunk": 1, "players": [2], "lineups": ["random"]}
QUICK = {"game": "trash_cult", "seed": 6, "games": 4, "chunk": 4, "players": [2], "lineups": ["random"]}
# One game whose every decision is a long search: minutes of play on this machine.
SLOW = {
    "game": "trash_cult",
    "seed": 5,
    "games": 1,
    "chunk": 1,
    "players": [2],
    "lineups": ["ismcts:iterations=200000"],
}


@pytest.fixture(scope="module")
def own_url(redis_url: str) -> Iterator[str]:
    url = redis_url.rsplit("/", 1)[0] + "/9"
    flush = redis.Redis.from_url(url)
    flush.flushdb()
    yield url
    flush.flushdb()
    flush.close()


@pytest.fixture()
def store(own_url: str) -> Iterator[SweepStore]:
    s = SweepStore.from_url(own_url)
    yield s
    s.r.close()


def waiting(store: SweepStore) -> int:
    pipe = store.r.pipeline()
    for name in queue_keys(control.QUEUE):
        pipe.llen(name)
    return sum(pipe.execute())


def poll(what, timeout: float, every: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(every)
    raise TimeoutError(f"not true after {timeout} s")


def test_a_large_submit_is_answered_at_once_and_planned_by_a_worker(own_url, store):
    app = Flask(__name__)
    app.config["SWEEPS_REDIS_URL"] = own_url
    app.register_blueprint(sweeps_api.bp)
    errors.register(app)
    client = act_as(app.test_client(), redis.Redis.from_url(own_url), "designer")

    reply = client.post("/api/sweeps", json=BIG)
    assert reply.status_code == 202, reply.get_json()
    body = reply.get_json()
    sweep_id = body["id"]
    assert (body["total_chunks"], body["chunks_queued"], body["planned_percent"]) == (4000, 0, 0.0)
    assert body["status"] == "queued"
    assert waiting(store) == 1, "only the planner was queued by the request"

    worker = start_worker(own_url, queues="sweeps", concurrency=1, name="sweeps-plan", point_shared=False)
    try:
        poll(lambda: client.get(f"/api/sweeps/{sweep_id}").get_json()["planned_percent"] == 100.0, 120)
        progress = client.get(f"/api/sweeps/{sweep_id}").get_json()
        assert progress["chunks_queued"] == 4000
        assert progress["games_done"] > 0 or waiting(store) > 0, "its chunks are being played"
    finally:
        assert client.post(f"/api/sweeps/{sweep_id}/cancel").status_code == 200
        stop_worker(worker)


def test_a_planner_resumes_from_what_it_had_queued_and_skips_a_cancelled_sweep(store):
    """Idempotent planning: a second delivery queues only what the first did not."""
    with client_app(_url(store)) as app:
        spec = parse_spec({**BIG, "games": 30})
        sweep_id = control.submit_to_plan(spec, store, app)
        store.r.hset(key(sweep_id, "meta"), "chunks_queued", 20)  # as if killed after 20
        before = waiting(store)
        assert control.plan(store, app, sweep_id, batch=4) == "planned"
        assert waiting(store) - before == 10
        assert control.progress(store, sweep_id)["planned_percent"] == 100.0
        assert control.cancel(store, sweep_id)
        assert control.plan(store, app, sweep_id).startswith("skipped")


def test_a_spec_that_cannot_deal_past_the_inline_checks_fails_in_the_planner(store):
    """The planner deals every cell; one the request did not deal fails the sweep, in words."""
    with client_app(_url(store)) as app:
        good_then_bad = {
            "game": "trash_cult",
            "games": 2,
            "players": [2],
            "grid": [{}, {"cults": ["x"]}],
        }
        spec = parse_spec(good_then_bad, deals=1)  # the request deals the first only
        sweep_id = control.submit_to_plan(spec, store, app)
        assert control.plan(store, app, sweep_id) == "invalid"
        meta = store.meta(sweep_id)
        assert meta["status"] == "failed" and meta["error"].startswith("invalid spec: cell"), meta


def _url(store: SweepStore) -> str:
    kw = store.r.connection_pool.connection_kwargs
    return f"redis://{kw['host']}:{kw['port']}/{kw.get('db', 0)}"


def test_a_cancel_stops_a_chunk_inside_one_long_game(own_url, store):
    """One worker process, busy with the slow game: once the sweep is cancelled, another
    ad hoc sweep queued behind it is played at once, so the cancelled game let go of the
    worker. (Ad hoc: a nightly would not wait for the cancel, test_priority.py.)"""
    with client_app(own_url) as app:
        slow = control.submit(parse_spec(SLOW), store, app)
        worker = start_worker(
            own_url, queues="sweeps", concurrency=1, name="sweeps-cancel", point_shared=False
        )
        try:
            poll(lambda: store.leases(slow), timeout=120)  # its worker is playing the game
            behind = control.submit(parse_spec(QUICK), store, app)
            time.sleep(3.0)
            assert store.status(behind) == "queued", "the only worker is inside the slow game"
            assert not store.has_chunk(slow, "0-0"), "the game is still running"
            cancelled = time.monotonic()
            assert control.cancel(store, slow)
            assert wait_for(store, behind, timeout=60) == "done"
            assert time.monotonic() - cancelled < 30
            assert not store.has_chunk(slow, "0-0") and store.status(slow) == "cancelled"
        finally:
            stop_worker(worker)
    log = (ROOT / ".pytest-worker-sweeps-cancel.log").read_text()
    assert re.search(rf"run_chunk\[sweep-{slow}-0-0\] succeeded in [0-9.]+s: 'cancelled'", log), log[-2000:]
