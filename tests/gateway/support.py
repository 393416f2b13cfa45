"""Helpers the gateway tests share: the engine's own answer to compare the gateway with,
and the check that a seat's view shows nothing of another seat's private view."""

from __future__ import annotations

import time
from typing import Any

import grpc
import orjson
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.core.messages import load_messages, message_to_dict
from services.platform.keys import table_key
from services.platform.packing import unpack_state


def two_player_config(game: str) -> dict[str, Any]:
    """Config that lets `game` seat 2 players: Crazy Cultists plays 2 only as its sweep
    variant, behind the `two_players` switch (CC-2); the other games need nothing."""
    return {"two_players": True} if game == "crazy_cultists" else {}


class EngineProbe:
    """Calls an engine directly, as the gateway would, to know the right answer."""

    def __init__(self, engines: dict) -> None:
        self.channels = {g: grpc.insecure_channel(f"127.0.0.1:{e.port}") for g, e in engines.items()}
        self.stubs = {g: engine_pb2_grpc.GameEngineStub(c) for g, c in self.channels.items()}

    def view(self, game: str, state: bytes, seat: int) -> dict[str, Any]:
        reply = self.stubs[game].View(engine_pb2.ViewRequest(state=state, seat=seat), timeout=5)
        body = load_messages(game).view()
        reply.view.Unpack(body)
        return message_to_dict(body)

    def close(self) -> None:
        for channel in self.channels.values():
            channel.close()


def stored(redis_client, table_id: str) -> tuple[int, bytes]:
    """The table's version and state bytes, read in one call, straight from Redis (the
    state unpacked: Redis holds it zlib-packed, packing.py)."""
    version, state = redis_client.hmget(table_key(table_id), "version", "state")
    return int(version), unpack_state(state)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}{i}."))
        return out
    return {prefix: value}


def private_paths(seat_view: dict, public: dict) -> set[str]:
    """Leaves a seat sees that a spectator does not (its hand, a peeked card...)."""
    mine, open_ = flatten(seat_view), flatten(public)
    return {p for p, v in mine.items() if p != "seat." and open_.get(p, object()) != v}


def assert_no_peeking(views: dict[int, dict], public: dict) -> None:
    """No seat's view holds what is private to another seat: wherever seat B sees more
    than a spectator, seat A sees what a spectator sees, unless that place is a
    viewer-relative one (like "my hand") that A fills with its own private cards."""
    private = {s: private_paths(v, public) for s, v in views.items()}
    flat = {s: flatten(v) for s, v in views.items()}
    open_ = flatten(public)
    for a in views:
        for b in views:
            if a == b:
                continue
            for path in private[b] - private[a]:
                assert flat[a].get(path) == open_.get(path), (
                    f"seat {a}'s view shows {path}={flat[a].get(path)!r}, private to seat {b}"
                )


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.02, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def sign_in_guest(client, name: str, device: str | None = None) -> dict[str, Any]:
    """A guest player (POST /api/players/guest) named `name`; its session with `headers`."""
    device = device or f"test-device-{name}-{time.monotonic_ns()}"
    reply = client.post("/api/players/guest", json={"device": device, "name": name})
    assert reply.status_code == 201, reply.get_json()
    session = reply.get_json()
    return {**session, "device": device, "headers": {"X-Player-Token": session["token"]}}


def sse_events(stream):
    """(event name, data) of each event of a test client's streamed response, as they come."""
    buffer = ""
    for chunk in stream.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
            if "event" in fields:
                yield fields["event"], orjson.loads(fields.get("data", "null"))
