"""One typed event wherever the API sends one (issue 33, item 2): a move's answer and a
stream's `log` and `update` events carry the log's own entries (`{id, version, at, kind,
seat, payload}` beside `text`), the same GET .../events pages give, and each validates
against the served document's schemas for its game (`MoveResult` and `StreamState` type
their `events` by the `game` beside them, oneOf by game, as `Events` types a page).
Real Flask app, real Redis, real engines; humans only, so nothing moves but the test."""

from __future__ import annotations

import copy
import random
from typing import Any

import jsonschema
import pytest

from services.engines.registry import available_games

from .conftest import bearer
from .support import sse_events

GAMES = available_games()
MOVES = 12  # enough for each game's own kinds to appear beside the platform's


def _draft7(node: Any) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema draft 7: `nullable` becomes a null type."""
    if isinstance(node, list):
        return [_draft7(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _draft7(v) for k, v in node.items() if k != "nullable"}
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def _validator(doc: dict[str, Any], name: str) -> jsonschema.Draft7Validator:
    root = {"components": _draft7(copy.deepcopy(doc["components"])), "$ref": f"#/components/schemas/{name}"}
    return jsonschema.Draft7Validator(root)


def _valid(check: jsonschema.Draft7Validator, data: Any) -> None:
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in check.iter_errors(data)]
    assert not errors, errors[:3]


def _title(game: str) -> str:
    return "".join(part.title() for part in game.split("_"))


def _until_update(events, version: int) -> tuple[list[dict], dict]:
    """The `log` events a stream sends up to its `update` at `version`, and that update."""
    logs = []
    for name, data in events:
        if name == "log":
            logs.append(data)
        elif name == "update" and data["version"] >= version:
            return logs, data
        elif name == "end":
            break
    raise AssertionError(f"the stream ended before its update at version {version}")


@pytest.mark.parametrize("game", GAMES)
def test_move_answers_and_stream_events_are_the_logs_typed_entries(client, game):
    doc = client.get("/api/v1/openapi.json").get_json()
    answer_check, state_check = _validator(doc, "MoveResult"), _validator(doc, "StreamState")
    event_check = _validator(doc, f"{_title(game)}Event")
    players = client.get(f"/api/v1/games/{game}").get_json()["default_players"]
    tid = client.post("/api/v1/tables", json={"game": game, "seed": 11}).get_json()["table"]
    tokens = [client.post(f"/api/v1/tables/{tid}/seats/{s}").get_json()["token"] for s in range(players)]
    path = f"/api/v1/tables/{tid}/events/stream"
    streams = {
        "seat": client.get(path, headers=bearer(tokens[0]), buffered=False),
        "public": client.get(path, buffered=False),
    }
    rng = random.Random(5)
    kinds: set[str] = set()
    try:
        followed = {name: sse_events(stream) for name, stream in streams.items()}
        for events in followed.values():
            name, state = next(events)
            assert name == "state" and state["game"] == game and "events" not in state
            _valid(state_check, state)
        for _ in range(MOVES):
            table = client.get(f"/api/v1/tables/{tid}").get_json()
            if table["status"] != "playing":
                break
            seat = table["to_act"][0]
            legal = client.get(f"/api/v1/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
            choice = rng.choice(legal["legal_actions"])
            answer = client.post(
                f"/api/v1/tables/{tid}/actions",
                json={"action": choice["id"], "version": legal["version"]},
                headers=bearer(tokens[seat]),
            ).get_json()
            # (a) the answer: typed by its game, its events the log's own entries
            assert answer["game"] == game
            _valid(answer_check, answer)
            assert not answer_check.is_valid({**answer, "game": "chess"}), "typed by a game it knows"
            moved = answer["events"]
            for event in moved:
                _valid(event_check, event)
                assert event["version"] == answer["version"]
                kinds.add(event["kind"])
            if moved:
                first = moved[0]["id"]
                page = client.get(f"/api/v1/tables/{tid}/events?after={first - 1}&limit={len(moved)}")
                assert page.get_json()["events"] == moved, "the answer's events are the log's"
            # (b) each stream: the same entries as `log` events, then in its update
            for events in followed.values():
                logs, update = _until_update(events, answer["version"])
                for event in logs:
                    _valid(event_check, event)
                assert logs[len(logs) - len(moved) :] == moved
                assert update["events"] == moved and update["game"] == game
                _valid(state_check, update)
    finally:
        for stream in streams.values():
            stream.close()
    assert kinds - {"created", "joined", "left", "timeout"}, "the game's own kinds were sent"


def test_a_streams_log_events_are_the_pages_entries(client):
    """A stream opened after the start replays the log as GET .../events pages it (ids
    included) after its state, and its `update` after a seat is taken carries that entry."""
    game = GAMES[0]
    players = client.get(f"/api/v1/games/{game}").get_json()["default_players"]
    tid = client.post("/api/v1/tables", json={"game": game}).get_json()["table"]
    client.post(f"/api/v1/tables/{tid}/seats/0")
    stream = client.get(f"/api/v1/tables/{tid}/events/stream", buffered=False)
    try:
        events = sse_events(stream)
        assert next(events)[0] == "state"
        replayed = [next(events) for _ in range(2)]
        client.post(f"/api/v1/tables/{tid}/seats/1")
        logs, update = _until_update(events, 0)
    finally:
        stream.close()
    page = client.get(f"/api/v1/tables/{tid}/events").get_json()["events"]
    assert [data for _, data in replayed] == page[:2] and [n for n, _ in replayed] == ["log", "log"]
    assert logs == update["events"] == page[2:] and page[2]["kind"] == "joined"
    assert update.get("seats") is True, "the change's own fields stay"
    assert update["status"] == ("playing" if players == 2 else "waiting")
