"""The floor a gateway move is measured against (issue 18 item 2): a bare Flask app under
the very same gunicorn configuration (deploy/gunicorn.conf.py: gevent workers, one per
core, gRPC told to cooperate with gevent) answering the bench client's requests with
canned bodies, where the move also makes the calls no gateway can avoid: one gRPC unary
call to an engine (`Ping`, which does no work inside the engine) and two Redis round trips
(a read of a table-sized hash, then a script call).

So the floor is what a move costs in Flask, gunicorn, gevent, gRPC and redis-py alone, with
none of the gateway's own logic; `bench/gateway.py` drives it with the same client, at the
same offered load, in the same run as the gateway, and reports the gateway's CPU per move
as a multiple of it. It serves the same URLs with bodies of the same shape and size, so the
client cannot tell them apart. Served by `gunicorn ... 'bench.floor:create_app()'`, with
REDIS_URL and ENGINE_ADDR_<GAME> as the gateway reads them.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

import grpc
import orjson
import redis
from cultists.v1 import engine_pb2, engine_pb2_grpc
from flask import Flask, Response, request

PLAYERS = 3
KEY = "bench:floor:table"
# A state of the size the engines' states have (bench grpc: ~1.5-1.7 KB), so the Redis
# read moves as many bytes as the gateway's.
STATE = b"x" * 1600
# The commit's stand-in: a script call that checks a version and writes, like the gateway's.
SCRIPT = """
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return {0, 0} end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
return {1, 1}
"""
# Six actions shaped like an engine's (id, label, detail), the size of a typical turn.
LEGAL_ACTIONS = [
    {"id": i, "label": f"play the {name}", "detail": {"kind": "play", "card": name, "target": -1}}
    for i, name in enumerate(
        ["Eight of Cups", "Two of Skulls", "Queen of Eyes", "Ace of Tides", "Five of Moths"]
    )
] + [{"id": 99, "label": "draw a card", "detail": {"kind": "draw", "card": "", "target": -1}}]


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status=status, mimetype="application/json")


def create_app() -> Flask:
    app = Flask(__name__, static_folder=None)
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    client.hset(KEY, mapping={"version": "1", "state": STATE, "to_act": "[0]"})
    script = client.register_script(SCRIPT)
    addresses = {
        name[len("ENGINE_ADDR_") :].lower(): value
        for name, value in os.environ.items()
        if name.startswith("ENGINE_ADDR_")
    }
    games = sorted(addresses)
    stubs: dict[str, engine_pb2_grpc.GameEngineStub] = {}  # made after the fork, on first use
    ping = engine_pb2.PingRequest()

    def engine(game: str) -> engine_pb2_grpc.GameEngineStub:
        stub = stubs.get(game)
        if stub is None:
            stub = stubs[game] = engine_pb2_grpc.GameEngineStub(grpc.insecure_channel(addresses[game]))
        return stub

    @app.post("/api/tables")
    def open_table() -> Response:
        game = (request.get_json() or {}).get("game")
        index = games.index(game) if game in games else 0
        return _json(
            {"table": f"{index:x}{secrets.token_hex(7)}f", "players": PLAYERS, "status": "waiting"}, 201
        )

    @app.post("/api/tables/<table_id>/seats/<int:seat>")
    def claim(table_id: str, seat: int) -> Response:
        return _json({"table": table_id, "seat": seat, "token": f"{seat}-{secrets.token_urlsafe(24)}"}, 201)

    @app.get("/api/tables/<table_id>")
    def summary(table_id: str) -> Response:
        return _json({"table": table_id, "status": "playing", "version": 1, "to_act": [0]})

    @app.get("/api/tables/<table_id>/legal")
    def legal(table_id: str) -> Response:
        seat = int(request.headers.get("Authorization", "Bearer 0").split()[1].split("-")[0])
        return _json(
            {
                "table": table_id, "version": 1, "seat": seat, "status": "playing",
                "your_turn": True, "to_act": [seat], "legal_actions": LEGAL_ACTIONS,
            }
        )  # fmt: skip

    @app.post("/api/tables/<table_id>/actions")
    def act(table_id: str) -> Response:
        seat = int(request.headers.get("Authorization", "Bearer 0").split()[1].split("-")[0])
        body = request.get_json()
        engine(games[int(table_id[0], 16) % len(games)]).Ping(ping, timeout=5)
        client.hgetall(KEY)
        script(keys=[KEY], args=["1", STATE])
        nxt = (seat + 1) % PLAYERS
        return _json(
            {
                "table": table_id, "version": 1, "status": "playing", "to_act": [nxt], "winners": [],
                "events": [{"kind": "play", "seat": seat, "text": f"seat {seat} played {body['action']}"}],
                "seat": seat, "your_turn": False, "legal_actions": [],
            }
        )  # fmt: skip

    return app
