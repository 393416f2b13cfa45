"""The reconciler's rules on real Redis, one pass at a time (no worker: nothing moves but
what the test does). Each test uses its own Redis database, so messages other tests left in
the shared queue cannot hide a lost chunk."""

from __future__ import annotations

import time
from collections.abc import Iterator

import orjson
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import generate_latest

from services.balance.sweeps import control
from services.balance.sweeps.leases import LEASE_SECONDS, Heartbeat
from services.balance.sweeps.metrics import SweepCollector, export_balance, export_drift
from services.balance.sweeps.reconcile import reconcile, waiting_messages
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.store import SweepStore
from tests.support.celery_worker import client_app

SPEC = {"game": "trash_cult", "seed": 5, "games": 6, "chunk": 2, "players": [2], "lineups": ["random"]}


@pytest.fixture()
def own(redis_url: str) -> Iterator[tuple[str, SweepStore]]:
    url = redis_url.rsplit("/", 1)[0] + "/7"
    store = SweepStore.from_url(url)
    store.r.flushdb()
    yield url, store
    store.r.flushdb()
    store.r.close()


@pytest.fixture()
def app(own):
    with client_app(own[0]) as app:
        yield app


def _queued_chunk_ids(store: SweepStore) -> list[str]:
    """Chunk ids of the chunk messages waiting in the sweeps queue, read from their headers."""
    out = []
    for key in store.r.keys(f"{control.QUEUE}*"):
        if store.r.type(key) != b"list":
            continue
        for raw in store.r.lrange(key, 0, -1):
            headers = orjson.loads(raw)["headers"]
            if headers["task"] == control.CHUNK_TASK:
                out.append(orjson.loads(headers["argsrepr"].replace("'", '"'))[1])
    return sorted(out)


def test_lost_messages_are_queued_again_once_the_queue_is_empty_and_the_sweep_idle(own, app):
    _url, store = own
    sweep_id = control.submit(parse_spec(SPEC), store, app)
    assert waiting_messages(store.r) == 3
    created = float(store.meta(sweep_id)["created"])
    # Queued and waiting: nothing is lost, however long it waits.
    assert reconcile(store, app, now=created + 10 * LEASE_SECONDS)["requeued"] == {}
    # The broker loses the messages (a Redis restart that lost its last writes).
    for key in store.r.keys(f"{control.QUEUE}*"):
        store.r.delete(key)
    # Not before the sweep has been idle for a lease's length: a worker may be starting one.
    assert reconcile(store, app, now=created + 1)["requeued"] == {}
    report = reconcile(store, app, now=created + LEASE_SECONDS + 1)
    assert report["requeued"] == {sweep_id: ["0-0", "0-1", "0-2"]}
    assert _queued_chunk_ids(store) == ["0-0", "0-1", "0-2"]
    assert control.progress(store, sweep_id)["chunks_requeued"] == 3
    # Queued again: the next pass waits for them rather than queueing them a third time.
    assert reconcile(store, app, now=created + 3 * LEASE_SECONDS)["requeued"] == {}


def test_a_chunk_whose_lease_ran_out_is_queued_again_a_live_or_stored_one_is_not(own, app):
    _url, store = own
    sweep_id = control.submit(parse_spec(SPEC), store, app)  # three messages wait in the queue
    now = time.time()
    store.renew_lease(sweep_id, "0-0", 30)  # a worker is on it
    store.renew_lease(sweep_id, "0-1", -1)  # its worker stopped renewing: gone
    store.store_chunk(sweep_id, "0-2", b"x", 2)  # stored (its lease goes with it)
    report = reconcile(store, app, now=now)
    assert report["requeued"] == {sweep_id: ["0-1"]}
    assert set(store.leases(sweep_id)) == {"0-0"}
    assert _queued_chunk_ids(store).count("0-1") == 2  # the original, and the one sent now


def test_a_sweep_with_every_chunk_in_and_no_summary_gets_its_finish_again(own, app):
    _url, store = own
    sweep_id = control.submit(parse_spec(SPEC), store, app)
    for chunk_id in ("0-0", "0-1", "0-2"):
        store.store_chunk(sweep_id, chunk_id, b"x", 2)
    assert reconcile(store, app)["finish"] == [sweep_id]
    store.claim_aggregation(sweep_id)  # a finisher is at work: leave it alone
    assert reconcile(store, app)["finish"] == []
    control.cancel(store, sweep_id)
    assert store.active_ids() == []


def test_heartbeat_keeps_the_lease_alive_and_drops_it_at_the_end(own):
    _url, store = own
    with Heartbeat(store, "s1", "0-0", seconds=0.6):
        first = store.leases("s1")["0-0"]
        deadline = time.monotonic() + 10
        while store.leases("s1")["0-0"] == first:
            assert time.monotonic() < deadline, "the lease was never renewed"
            time.sleep(0.05)
        assert store.leases("s1")["0-0"] > first
    assert store.leases("s1") == {}


def _samples(url: str) -> str:
    reg = CollectorRegistry()
    reg.register(SweepCollector(url))
    return generate_latest(reg).decode()


def test_progress_series_are_only_those_of_active_sweeps(own, app):
    url, store = own
    sweep_id = control.submit(parse_spec(SPEC), store, app)
    store.store_chunk(sweep_id, "0-0", b"x", 2)
    text = _samples(url)
    assert f'cultists_sweep_progress_ratio{{game="trash_cult",kind="adhoc",sweep="{sweep_id}"}} 0.333' in text
    assert (
        f'cultists_sweep_last_progress_timestamp_seconds{{game="trash_cult",kind="adhoc",status="queued",sweep="{sweep_id}"}}'
        in text
    )
    control.cancel(store, sweep_id)
    assert sweep_id not in _samples(url)


def test_drift_series_of_metrics_that_stopped_drifting_leave(own):
    url, store = own

    def night(drifted: list[dict]) -> dict:
        cell = {"label": "base | 2p | random", "flagged": False, "first_seat_advantage": {"advantage": 0.01}}
        return {"aggregates": {"cells": [cell]}}, {"drifted": drifted}

    summary, drift = night([{"cell": "base | 2p | random", "metric": "seat 0 win rate", "difference": 0.05}])
    export_balance("trash_cult", summary, store)
    export_drift("trash_cult", drift, store)
    text = _samples(url)
    assert 'cultists_balance_drift{game="trash_cult"} 1.0' in text
    assert 'metric="seat 0 win rate"' in text
    summary, drift = night([])
    export_balance("trash_cult", summary, store)
    export_drift("trash_cult", drift, store)
    text = _samples(url)
    assert 'cultists_balance_drift{game="trash_cult"} 0.0' in text
    assert "seat 0 win rate" not in text
    assert 'cultists_balance_first_seat_advantage{cell="base | 2p | random",game="trash_cult"} 0.01' in text
