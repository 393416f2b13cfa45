"""State <-> bytes, for engines that are stateless (architecture decision 1).

The bytes are the documented JSON form (docs/state-json.md) encoded compactly, so what
travels between gateway, Redis and engine is the same thing support staff read when
debugging. JSON, not pickle: the bytes cross a network boundary and must never run code.
"""

from __future__ import annotations

from typing import Any

import orjson

from .errors import BadState
from .game import State


def state_to_bytes(state: State) -> bytes:
    return orjson.dumps(state.to_json())


def json_from_bytes(data: bytes) -> dict[str, Any]:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise BadState(f"state bytes are not readable JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise BadState("state must be a JSON object")
    return doc


def state_from_json(doc: dict[str, Any], expected_game: str | None = None) -> State:
    """Restore any game's state; the game is named inside the document."""
    from ..registry import load_game  # the registry imports games, which import core

    name = doc.get("game")
    if expected_game is not None and name != expected_game:
        raise BadState(f"state is for game {name!r}, this engine serves {expected_game!r}")
    if not isinstance(name, str):
        raise BadState("state does not name its game")
    try:
        spec = load_game(name)
    except KeyError:
        raise BadState(f"state names unknown game {name!r}") from None
    return spec.state_class.from_json(doc)


def state_from_bytes(data: bytes, expected_game: str | None = None) -> State:
    return state_from_json(json_from_bytes(data), expected_game)
