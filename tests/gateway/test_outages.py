"""What a client sees during an outage: an engine stopped mid-call or a Redis that is down
is a 503 with Retry-After (never a 500 or 502), nothing is half-applied, and the gateway
serves again by itself once the part is back (docs/outages.md)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import replace
from pathlib import Path
from typing import Any

import grpc
import pytest
from cultists.v1 import engine_pb2_grpc
from prometheus_client import REGISTRY

from services.engines.core.budget import BotBudget
from services.engines.core.messages import load_messages
from services.engines.core.server import EngineServicer, start_engine
from services.engines.registry import load_game
from services.gateway import create_app
from services.platform.engines import EngineClients
from services.platform.errors import PlatformError
from services.platform.settings import Settings
from services.runtime.embedded_redis import start_redis

from .conftest import bearer
from .support import stored

GAME = "trash_cult"  # two seats: Crazy Cultists needs three (CC-2)
THINKER = "trash_cult"  # its first decision has several legal actions: a bot really searches


def test_an_engine_stopped_mid_call_is_503_engine_unavailable():
    """The engine's own stop cuts a bot search off (grpc 1.85 ends it UNAVAILABLE,
    "Cancelling all calls"; a call the server cancels ends CANCELLED, the next test).
    The engine's own ceiling is raised to let the 20 s search in (budget.py)."""
    engine = start_engine(THINKER, port=0, budget=BotBudget(ms=30_000.0))
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
        assert isinstance(error, PlatformError)
        assert (error.status, error.code) == (503, "engine_unavailable"), error.message
    finally:
        engine.stop(grace=0)
        clients.close()


class _HoldApply(grpc.ServerInterceptor):
    """Holds every Apply call on the server until the call is cancelled, so that a test
    knows the call is in flight (`entered`) when it stops the engine under it."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.calls: list[grpc.ServicerContext] = []

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        if handler is None or not details.method.endswith("/Apply"):
            return handler
        serve = handler.unary_unary

        def held(request: Any, context: grpc.ServicerContext) -> Any:
            self.calls.append(context)
            self.entered.set()
            while context.is_active():
                time.sleep(0.01)
            return serve(request, context)

        return grpc.unary_unary_rpc_method_handler(
            held, request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )  # fmt: skip


@pytest.fixture()
def held_engine() -> Iterator[tuple[grpc.Server, int, _HoldApply]]:
    """The Trash Cult engine's own servicer on a real gRPC server of this test's, with
    the holding interceptor in front of it."""
    hold = _HoldApply()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), interceptors=[hold])
    servicer = EngineServicer(load_game(GAME), load_messages(GAME))
    engine_pb2_grpc.add_GameEngineServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield server, port, hold
    server.stop(grace=0)


def _engine_errors(code: str) -> float:
    labels = {"game": GAME, "method": "Apply", "code": code}
    return REGISTRY.get_sample_value("cultists_gateway_engine_errors_total", labels) or 0.0


def _table_with_a_move(client) -> tuple[str, list[str], int, dict[str, int]]:
    """A two-human table with both seats taken: its id, the seat tokens, the seat to act
    and a legal first move for it."""
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    public = client.get(f"/api/tables/{tid}/view").get_json()
    seat = public["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    return tid, tokens, seat, {"action": legal["legal_actions"][0]["id"], "version": public["version"]}


def test_an_engine_that_cancels_a_move_in_flight_is_503_and_the_table_is_unchanged(
    engines, gateway_settings, held_engine
):
    """The engine stops while a move's Apply is in flight and cuts the call off with
    RST_STREAM CANCEL, as a server or proxy shutting down does (what #14 saw reach clients
    as 502 engine_error "CANCELLED"): the client gets 503 engine_unavailable with
    Retry-After, the table keeps its version and state, and the same move is made once
    the engine is back on its address."""
    server, port, hold = held_engine
    addresses = {g: f"127.0.0.1:{e.port}" for g, e in engines.items()} | {GAME: f"127.0.0.1:{port}"}
    app = create_app(replace(gateway_settings, engine_addresses=addresses, engine_timeout=30))
    gw = app.extensions["cultists"]
    client = app.test_client()
    back = None
    try:
        tid, tokens, seat, move = _table_with_a_move(client)
        before = stored(gw.redis, tid)
        cancelled = _engine_errors("CANCELLED")

        replies: list[Any] = []

        def play() -> None:
            replies.append(client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat])))

        mover = threading.Thread(target=play)
        mover.start()
        assert hold.entered.wait(10), "the move never reached the engine"
        for call in hold.calls:  # the engine goes away with the call in flight
            call.cancel()
        server.stop(grace=0)
        mover.join(timeout=10)
        assert not mover.is_alive()

        [reply] = replies
        assert reply.status_code == 503, reply.get_data(as_text=True)
        assert reply.get_json()["error"]["code"] == "engine_unavailable"
        assert reply.headers["Retry-After"].isdigit()
        assert _engine_errors("CANCELLED") == cancelled + 1, "the call did not end CANCELLED"
        assert stored(gw.redis, tid) == before, "the cancelled move changed the table"

        back = start_engine(GAME, port=port)  # the engine restarted on its address
        made = client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat]))
        assert made.status_code == 200, made.get_json()
        assert stored(gw.redis, tid)[0] == before[0] + 1
    finally:
        if back is not None:
            back.stop(grace=0)
        gw.close()


def test_engine_down_answers_retry_after(gateway_settings):
    dead = replace(gateway_settings, engine_addresses={GAME: "127.0.0.1:1"}, engine_timeout=1.0)
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
        tid, tokens, seat, move = _table_with_a_move(client)

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
        assert after["version"] == move["version"]
        made = client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat]))
        assert made.status_code == 200, made.get_json()
        assert client.get(f"/api/tables/{tid}/view").get_json()["version"] == move["version"] + 1
    finally:
        app.extensions["cultists"].close()
