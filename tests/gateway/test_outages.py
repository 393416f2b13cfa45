"""What a client sees during an outage: an engine stopped mid-call or a Redis that is down
is a 503 with Retry-After (never a 500 or 502), nothing is half-applied, and the gateway
serves again by itself once the part is back (docs/outages.md)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from services.engines.core.server import start_engine
from services.gateway import create_app
from services.gateway.engines import EngineClients
from services.gateway.errors import ApiError
from services.gateway.settings import Settings
from services.runtime.embedded_redis import start_redis

from .conftest import bearer

GAME = "trash_cult"  # two seats: Crazy Cultists needs three (CC-2)
THINKER = "trash_cult"  # its first decision has several legal actions: a bot really searches


def test_an_engine_stopped_mid_call_is_503_engine_unavailable():
    """A stop cuts a call off; depending on how the connection goes the client library
    says UNAVAILABLE or CANCELLED (which used to reach clients as 502): both are 503."""
    engine = start_engine(THINKER, port=0)
    clients = EngineClients(
        Settings(engine_addresses={THINKER: f"127.0.0.1:{engine.port}"}, engine_timeout=30)
    )
    try:
        step = clients.new_game(THINKER, {}, 2, seed=1)
        outcome: list[BaseException] = []

        def think() -> None:
            try:  # a long bot search, so the stop lands while the call is in flight
                clients.suggest(THINKER, step.state, step.to_act[0], "ismcts:ms=20000", 1)
            except BaseException as exc:  # what the call raised is the result
                outcome.append(exc)

        caller = threading.Thread(target=think)
        caller.start()
        time.sleep(0.5)
        engine.stop(grace=0)
        caller.join(timeout=30)
        assert not caller.is_alive()
        [error] = outcome
        assert isinstance(error, ApiError)
        assert (error.status, error.code) == (503, "engine_unavailable"), error.message
    finally:
        engine.stop(grace=0)
        clients.close()


def test_engine_down_answers_retry_after(gateway_settings, redis_url):
    dead = Settings(redis_url=redis_url, engine_addresses={GAME: "127.0.0.1:1"}, engine_timeout=1.0)
    app = create_app(dead)
    try:
        reply = app.test_client().post("/api/tables", json={"game": GAME})
        assert reply.status_code == 503 and reply.headers["Retry-After"].isdigit()
        assert reply.get_json()["error"]["code"] == "engine_unavailable"
    finally:
        app.extensions["cultists"].close()


@pytest.fixture()
def own_redis(tmp_path: Path):
    """A Redis of this test's own, which it stops and starts again on the same port and
    append-only file (the session's Redis serves every other test)."""
    server = start_redis(persist=True, data_dir=tmp_path)
    yield server, tmp_path
    server.stop()


def test_redis_down_is_503_store_unavailable_and_recovers(engines, own_redis):
    server, data = own_redis
    settings = Settings(
        redis_url=server.url, engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()}
    )
    app = create_app(settings)
    client = app.test_client()
    try:
        tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
        tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
        public = client.get(f"/api/tables/{tid}/view").get_json()
        seat = public["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        move = {"action": legal["legal_actions"][0]["id"], "version": public["version"]}

        server.process.kill()
        server.process.wait()
        for reply in (
            client.get(f"/api/tables/{tid}/view"),
            client.get("/api/tables"),
            client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat])),
            client.post("/api/tables", json={"game": GAME, "players": 2}),
        ):
            assert reply.status_code == 503, reply.get_data(as_text=True)
            assert reply.get_json()["error"]["code"] == "store_unavailable"
            assert reply.headers["Retry-After"].isdigit()
        assert client.get("/healthz").status_code == 503

        # Back on the same port from its append-only file: the gateway reconnects by
        # itself, the refused move was not applied, and it can be made now.
        again = start_redis(port=server.port, persist=True, data_dir=data)
        server.process = again.process
        assert client.get("/healthz").status_code == 200
        after = client.get(f"/api/tables/{tid}/view").get_json()
        assert after["version"] == public["version"]
        made = client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat]))
        assert made.status_code == 200, made.get_json()
        assert client.get(f"/api/tables/{tid}/view").get_json()["version"] == public["version"] + 1
    finally:
        app.extensions["cultists"].close()
