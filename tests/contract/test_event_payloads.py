"""Every event of every game carries a payload typed by its game and kind, and every one
validates against the schema the gateway publishes for it.

Random games are played through each game's real gRPC engine (NewGame and Apply, each
Step carrying the legal actions of the seats to act, as the platform plays them), at every
table size the game takes; each event of each Step is decoded as the platform decodes it
(`GameMessages.event_from_any`), made a log entry
(`id`, `version`, `at`, `kind`, `seat`, `payload`, `text`) and held to the document's
`<Game>Event` schema: its kind is one the game lists, its payload holds exactly that
kind's fields, `card` an object {id, name}, a targeted seat `target`, nothing empty
standing for "absent". The kinds the games list are also seen: a kind nobody emits
is a stale entry.
"""

from __future__ import annotations

import importlib
import random
import time

import grpc
import jsonschema_rs
import pytest
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.core.messages import load_messages
from services.engines.registry import available_games, load_game
from services.gateway import BLUEPRINTS
from services.gateway.openapi import document

GAMES = available_games()
GAMES_PER_SIZE = 4
# Kinds a handful of random games may not reach (a turn cap, a variant, an empty hand).
RARE = {
    "crazy_cultists": {"pass", "capped", "dark", "spire", "overshoot", "skip", "cancel", "ouija"},
    "trash_cult": {"end", "reshuffle", "pass"},
    "tricky_cultists": {"over"},
}


@pytest.fixture(scope="module")
def components() -> dict:
    """The served document's components, as create_app merges them (its paths aside)."""
    schemas: dict = {}
    for name in BLUEPRINTS:
        schemas.update(getattr(importlib.import_module(name), "OPENAPI_SCHEMAS", {}))
    return document({}, schemas, GAMES, load_messages)["components"]


def validator_for(components: dict, name: str) -> jsonschema_rs.Draft7Validator:
    """A Draft 7 validator of the document's schema `name`. jsonschema-rs (schemathesis'
    own validator) rather than the pure-Python jsonschema: the same standard, and each of
    the tens of thousands of log entries below is held to a 28-way oneOf, which the pure
    one took over 30 s to walk for Trash Cult alone."""
    root = {"$ref": f"#/components/schemas/{name}", "components": components}
    return jsonschema_rs.Draft7Validator(root)


def events_of(stub, messages, game: str, players: int, seed: int) -> list[dict]:
    """A random game's log: each event as the platform writes it."""
    pick = random.Random(seed)
    step = stub.NewGame(
        engine_pb2.NewGameRequest(players=players, seed=seed, config=_config(game, players), with_legal=True)
    )
    log: list[dict] = []
    version = 0
    while True:
        for e in step.events:
            payload = messages.event_from_any(e.payload) if e.HasField("payload") else {}
            log.append(
                {"id": len(log), "version": version, "at": time.time(), "kind": e.kind, "seat": e.seat,
                 "payload": payload, "text": e.text}
            )  # fmt: skip
        if step.terminal or step.turn > 400:
            return log
        seat = step.to_act[0]
        legal = next(s.actions for s in step.legal if s.seat == seat)
        action = pick.choice(legal).id
        step = stub.Apply(
            engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True)
        )
        version += 1


def _config(game: str, players: int):
    """Crazy Cultists takes two players only with its variant flag (CC-2)."""
    from google.protobuf import any_pb2

    packed = any_pb2.Any()
    if game == "crazy_cultists" and players == 2:
        packed = load_messages(game).config_to_any({"two_players": True})
    return packed


@pytest.mark.parametrize("game", GAMES)
def test_every_event_validates_against_its_published_schema(game, engines, components):
    messages = load_messages(game)
    spec = load_game(game)
    title = messages.event.DESCRIPTOR.name.removesuffix("EventPayload")
    check = validator_for(components, f"{title}Event")
    seen: dict[str, int] = {}
    channel = grpc.insecure_channel(f"127.0.0.1:{engines[game].port}")
    stub = engine_pb2_grpc.GameEngineStub(channel)
    try:
        for players in range(spec.min_players, spec.max_players + 1):
            for g in range(GAMES_PER_SIZE):
                for entry in events_of(stub, messages, game, players, seed=1000 * players + g):
                    errors = sorted(check.iter_errors(entry), key=str)
                    assert not errors, (entry, [e.message for e in errors][:3])
                    seen[entry["kind"]] = seen.get(entry["kind"], 0) + 1
                    for value in entry["payload"].values():
                        assert value not in ("", None, [], {}), entry  # absent, never empty
                    card = entry["payload"].get("card")
                    if card is not None:
                        assert set(card) == {"id", "name"} and card["id"] and card["name"], entry
    finally:
        channel.close()
    listed = set(messages.events)
    assert set(seen) <= listed
    missing = listed - set(seen) - RARE[game]
    assert not missing, f"listed kinds never emitted: {sorted(missing)}"
    assert any(entry for entry in seen if messages.events[entry].always), "payloads are not empty"


def test_a_payload_that_breaks_its_kind_is_refused(components):
    """The schemas are strict: a field of another kind, a missing field, a card as text."""
    check = validator_for(components, "TrashCultEvent")
    base = {"id": 0, "version": 1, "at": 1.0, "seat": 0, "text": "seat 0 draws 2 card(s)"}
    assert check.is_valid({**base, "kind": "draw", "payload": {"count": 2}})
    assert not check.is_valid({**base, "kind": "draw", "payload": {}})
    assert not check.is_valid({**base, "kind": "draw", "payload": {"count": 2, "cult": "Rat"}})
    assert not check.is_valid({**base, "kind": "discard", "payload": {"card": "Pizza"}})
    assert check.is_valid({**base, "kind": "discard", "payload": {"card": {"id": "Pizza", "name": "Pizza"}}})
    assert not check.is_valid({**base, "kind": "no_such_kind", "payload": {}})
    assert check.is_valid(
        {**base, "seat": -1, "kind": "created", "payload": {"game": "trash_cult", "players": 2}}
    )
