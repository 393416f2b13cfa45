"""Live-play fairness (issue 27 item 3): a table's bots are priced as a whole, a bot-only
table of a guest or anonymous client seats cheap bots only, and a human's bot opponents
are served before tables of bots only.

Real parts: the gateway app on real Redis with the in-process engines, and for the
ordering a real `celery worker` of its own on a redis-server of its own (so the package's
table worker cannot take these tasks). Bot-only tables go to a queue of their own, `bots`,
so a `-Q tables` worker is always free for humans.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from services.platform.context import Platform
from services.platform.dispatch import BOTS_QUEUE, PRIORITY, QUEUE
from services.platform.errors import PlatformError
from services.platform.settings import Settings
from services.platform.store import hash_token
from services.runtime.broker import PRIORITY_STEPS, queue_keys
from services.runtime.embedded_redis import start_redis
from services.runtime.task_client import task_client
from tests.gateway.conftest import engine_env
from tests.gateway.support import sign_in_guest
from tests.support.celery_worker import start_worker, stop_worker

GAME = "trash_cult"
SHORT = {"max_turns": 30}
SEARCH = "ismcts:ms=300"


def _open(client, seats: list[dict], headers: dict | None = None):
    body = {"game": GAME, "players": len(seats), "config": SHORT, "seats": seats}
    return client.post("/api/tables", json=body, headers=headers or {})


def _account(client, name: str) -> dict[str, str]:
    guest = sign_in_guest(client, name)
    password = "a long enough passphrase for tests"
    upgraded = client.post(
        "/api/players/me/upgrade", json={"username": name, "password": password}, headers=guest["headers"]
    )
    assert upgraded.status_code == 200, upgraded.get_json()
    session = client.post("/api/sessions", json={"username": name, "password": password})
    assert session.status_code == 201, session.get_json()
    return {"X-Player-Token": session.get_json()["token"]}


BOTS_ONLY = [{"kind": "bot", "bot": SEARCH}, {"kind": "bot", "bot": "heuristic"}]


def test_a_guests_bot_only_table_seats_cheap_bots_only(client):
    guest = sign_in_guest(client, "gus")["headers"]
    for headers in (guest, {}):  # a guest, and nobody signed in
        refused = _open(client, BOTS_ONLY, headers)
        assert refused.status_code == 403, refused.get_json()
        error = refused.get_json()["error"]
        assert error["code"] == "bot_only_search" and "cheap bots only" in error["message"]
        cheap = _open(
            client, [{"kind": "bot", "bot": "heuristic"}, {"kind": "bot", "bot": "random"}], headers
        )
        assert cheap.status_code == 201, cheap.get_json()
        # With a human seat someone plays: the search is their opponent, and allowed.
        with_human = _open(client, [{"kind": "human"}, {"kind": "bot", "bot": SEARCH}], headers)
        assert with_human.status_code == 201, with_human.get_json()
    assert client.get("/api/tables?status=waiting").get_json()["total"] == 2


def test_an_account_may_open_a_bot_only_table_with_searches(client):
    table = _open(client, BOTS_ONLY, _account(client, "acct"))
    assert table.status_code == 201, table.get_json()


def test_a_tables_bots_are_bounded_together(client, gateway_settings):
    """Each seat within its own bound (1000), four of them over the table's (3000)."""
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": "ismcts:ms=1000"}] * 4
    body = {"game": "crazy_cultists", "players": 5, "config": {"variant": "beast"}, "seats": seats}
    refused = client.post("/api/tables", json=body)
    assert refused.status_code == 400, refused.get_json()
    error = refused.get_json()["error"]
    assert error["code"] == "table_bot_budget"
    assert f"at most {gateway_settings.table_bot_ms:g}" in error["message"]
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": "ismcts:iterations=1000"}] * 4
    refused = client.post("/api/tables", json={**body, "seats": seats})
    assert refused.get_json()["error"]["code"] == "table_bot_budget"
    assert f"at most {gateway_settings.table_bot_iterations}" in refused.get_json()["error"]["message"]
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": "ismcts:ms=1000"}] * 3 + [{"kind": "bot"}]
    assert client.post("/api/tables", json={**body, "seats": seats}).status_code == 201


# -- queueing --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def own_broker():
    """A real redis-server of this module's own, for its store and broker alone: no other
    worker of the run (the package's table worker, a parallel test process) reads it."""
    server = start_redis()
    client = redis.Redis.from_url(server.url)
    try:
        yield server.url, client
    finally:
        client.close()
        server.stop()


@pytest.fixture()
def own_store(own_broker):
    url, client = own_broker
    client.flushdb()
    yield url, client
    client.flushdb()


def _platform(url: str, engines: dict, **overrides) -> Platform:
    settings = Settings(
        redis_url=url,
        broker_url=url,
        engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()},
        **overrides,
    )
    return Platform.build(settings, task_client(url))


def _waiting(client: redis.Redis, queue: str = QUEUE) -> dict[int, int]:
    """Messages waiting on a queue, by priority step."""
    return {step: client.llen(key) for step, key in zip(PRIORITY_STEPS, queue_keys(queue), strict=True)}


def _bot_only_tables(platform: Platform, count: int) -> list[str]:
    """Tables of two searching bots, opened by an account (a guest may not seat searches)."""
    return [
        platform.tables.open_table(GAME, 2, SHORT, [SEARCH, SEARCH], 60.0, opened_by="account").id
        for _ in range(count)
    ]


def _human_table(platform: Platform) -> str:
    """A table where a human sits and a bot must move first (the deal's first seat)."""
    first = platform.engines.new_game(GAME, SHORT, 2, 1).to_act[0]
    human = 1 - first
    claims = {human: (hash_token("seat-token"), "ann", None)}
    bots = ["heuristic", "heuristic"]
    bots[human] = None
    table = platform.tables.open_table(GAME, 2, SHORT, bots, 60.0, seed=1, claims=claims)
    assert table.status == "playing" and table.to_act == [first], "the bot is not the first to act"
    return table.id


def test_a_bot_only_table_moves_in_stretches_queued_behind_humans(own_store, engines):
    url, client = own_store
    platform = _platform(url, engines, bot_only_slice_seconds=0.0)
    try:
        bots = platform.tables.open_table(GAME, 2, SHORT, ["heuristic", "random"], 60.0, opened_by="account")
        human = _human_table(platform)
        # The human's on the tables queue, the bots' on their own, at background priority.
        assert _waiting(client) == {PRIORITY["human"]: 1, 3: 0, 6: 0, 9: 0}
        assert _waiting(client, BOTS_QUEUE) == {0: 0, 3: 0, 6: 0, PRIORITY["bots_only"]: 1}
        client.delete(*queue_keys(QUEUE), *queue_keys(BOTS_QUEUE))
        # The task body, run here: a stretch of one move (slice 0), then its next stretch
        # queued on the bots' queue at background priority.
        assert platform.tables.advance(bots.id) == 1
        assert platform.store.load(bots.id).version == 1
        assert (
            _waiting(client, BOTS_QUEUE)[PRIORITY["bots_only"]] == 1 and sum(_waiting(client).values()) == 0
        )
        # A table with a human plays its bots until the human must decide, in one task.
        platform.tables.advance(human)
        table = platform.store.load(human)
        assert table.version >= 1 and all(table.seats[s].kind == "human" for s in table.to_act)
    finally:
        platform.close()


def test_a_humans_bot_opponent_moves_before_queued_bot_only_tables(own_store, engines):
    """Bot-only tables queued first, then a human's table; one worker process listening on
    both queues starts: the human's table moves first, and no bot-only table has moved by
    then (kombu pops by priority across a worker's queues)."""
    url, client = own_store
    platform = _platform(url, engines)
    worker = None
    try:
        bot_only = _bot_only_tables(platform, 4)
        human = _human_table(platform)
        assert (
            _waiting(client, BOTS_QUEUE)[PRIORITY["bots_only"]] == 4
            and _waiting(client)[PRIORITY["human"]] == 1
        )
        first_moves: dict[str, float] = {}
        halt = threading.Event()
        watcher = threading.Thread(target=_watch, args=(platform, [human, *bot_only], first_moves, halt))
        watcher.start()
        try:
            worker = start_worker(
                url, queues=f"{QUEUE},{BOTS_QUEUE}", concurrency=1, name="fairness", extra_env=engine_env(engines),
                point_shared=False,
            )  # fmt: skip
            deadline = time.monotonic() + 120
            while len(first_moves) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            halt.set()
            watcher.join(timeout=10)
        assert human in first_moves, "the human's table never moved"
        others = [first_moves[t] for t in bot_only if t in first_moves]
        assert others, "no bot-only table moved within the wait"
        assert first_moves[human] < min(others), "a bot-only table moved before the human's"
    finally:
        if worker is not None:
            stop_worker(worker, hard=True)
        platform.close()


def _watch(platform: Platform, tables: list[str], first: dict[str, float], halt: threading.Event) -> None:
    """When each table first moves (its version leaves 0), read every 20 ms."""
    while not halt.is_set():
        for table_id in tables:
            if table_id not in first:
                table = platform.store.load(table_id)
                if table is not None and table.version > 0:
                    first[table_id] = time.monotonic()
        time.sleep(0.02)


def test_a_tables_worker_never_takes_a_bot_only_table(own_store, engines):
    """The tables workers are the humans' alone: with bot-only tables waiting on their queue,
    a `-Q tables` worker serves a human's table and then one more, and the bot-only tables'
    messages are all still there, untouched. (The bots workers take them: the other tests.)"""
    url, client = own_store
    platform = _platform(url, engines)
    worker = None
    try:
        bot_only = _bot_only_tables(platform, 3)
        worker = start_worker(
            url, queues=QUEUE, concurrency=1, name="fairness-humans", extra_env=engine_env(engines),
            point_shared=False,
        )  # fmt: skip
        for _ in range(2):  # the second is queued after the worker has had every chance to pop
            human = _human_table(platform)
            deadline = time.monotonic() + 120  # a worker's start and a heuristic move on a busy machine
            while platform.store.load(human).version == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert platform.store.load(human).version > 0, "the human's table never moved"
        assert _waiting(client, BOTS_QUEUE)[PRIORITY["bots_only"]] == 3
        assert all(platform.store.load(t).version == 0 for t in bot_only)
    finally:
        if worker is not None:
            stop_worker(worker, hard=True)
        platform.close()


def test_untrusted_openers_are_refused_in_the_platform_too(own_store, engines):
    url, _client = own_store
    platform = _platform(url, engines)
    try:
        with pytest.raises(PlatformError) as caught:
            platform.tables.open_table(GAME, 2, SHORT, [SEARCH, "random"], 60.0, opened_by="guest")
        assert caught.value.status == 403 and caught.value.code == "bot_only_search"
    finally:
        platform.close()
