"""The JSON state form refuses a value of the wrong kind instead of converting it.

docs/state-json.md promises that a field of the wrong kind is refused with BadState (gRPC
INVALID_ARGUMENT). The property: take a real position of any game, replace one value
anywhere in its document (a common field, a config field, a zone, an entry of a pending
decision) by a value of another kind (`"1"`, `1.9`, `1.0`, `true`, `null`, a list, an
object), and the document is either refused with BadState, or it is read and written back
byte for byte as given and the position still plays (every seat's view, a legal move).
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.engines.core.errors import BadState
from services.engines.core.game import State
from services.engines.core.rng import Rng
from services.engines.registry import load_game

GAMES = ("crazy_cultists", "trash_cult", "tricky_cultists")


def _positions(game: str) -> list[dict[str, Any]]:
    """A few documents per game: the deal, early play, deep play, and the game's end."""
    spec = load_game(game)
    docs = []
    for seed, depth in ((1, 0), (2, 7), (3, 40), (4, 150), (5, 10_000)):
        state = spec.new_state(None, spec.default_players, seed)
        rng = Rng(seed)
        for _ in range(depth):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        docs.append(state.to_json())
    return docs


POSITIONS = {game: _positions(game) for game in GAMES}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document a value sits, containers included (not the root)."""
    out = [path] if path else []
    if type(value) is dict:
        for key, item in value.items():
            out.extend(_paths(item, (*path, key)))
    elif type(value) is list:
        for i, item in enumerate(value):
            out.extend(_paths(item, (*path, i)))
    return out


def _others(value: Any) -> list[Any]:
    """Values of another JSON kind than `value` that a careless reader might still take."""
    kind = type(value)
    if kind is bool:
        return [int(value), str(value).lower(), None, float(value), [value]]
    if kind is int:
        return [str(value), float(value), value + 0.9, value == 1, None, [value], {"v": value}]
    if kind is str:
        return [0, 1, None, [value], True, 1.5]
    if value is None:
        return [0, -1, "", False, [], {}]
    if kind is list:
        return [{}, 0, "", None, True, orjson.dumps(value).decode()]
    return [[], 0, "", None, True, [value]]


def _set(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    target: Any = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value


def _bytes(doc: Any) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


@pytest.mark.parametrize("game", GAMES)
@settings(
    max_examples=500,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_value_of_another_kind_is_refused_or_round_trips_exactly(game: str, data: st.DataObject) -> None:
    cls: type[State] = load_game(game).state_class
    doc = orjson.loads(orjson.dumps(data.draw(st.sampled_from(POSITIONS[game]), label="position")))
    path = data.draw(st.sampled_from(_paths(doc)), label="path")
    original: Any = doc
    for step in path:
        original = original[step]
    bad = data.draw(st.sampled_from(_others(original)), label="replacement")
    _set(doc, path, bad)
    given_bytes = _bytes(doc)
    try:
        state = cls.from_json(doc)
    except BadState:
        assert _bytes(doc) == given_bytes, "a refused document must be left as it was"
        return
    # Accepted: it must be exactly what was given, and a position that still plays.
    assert _bytes(state.to_json()) == given_bytes, f"{path}: {bad!r} was converted"
    for seat in [None, *range(state.num_players)]:
        state.view(seat)
    if not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        state.apply(seat, legal[0])  # a legal move of an accepted position just plays


@pytest.mark.parametrize("field", ["seed", "rng", "turn", "decisions", "players"])
@pytest.mark.parametrize("bad", ["1", 1.9, 1.0, True, None, [1]])
def test_common_fields_refuse_text_floats_and_bools(field: str, bad: Any) -> None:
    """The issue's cases, named: `"1"`, `1.9` and `true` were once read through int()."""
    doc = POSITIONS["tricky_cultists"][1]
    with pytest.raises(BadState, match=field if field != "players" else "player count"):
        load_game("tricky_cultists").state_class.from_json({**doc, field: bad})


@pytest.mark.parametrize("game", GAMES)
def test_config_values_are_read_as_written(game: str) -> None:
    """`--set ranks=13` converts text for a person; a state document is never converted."""
    doc = POSITIONS[game][0]
    cls = load_game(game).state_class
    key = next(k for k, v in doc["config"].items() if type(v) is int)
    for bad in (str(doc["config"][key]), float(doc["config"][key])):
        with pytest.raises(BadState, match=f"config field '{key}'"):
            cls.from_json({**doc, "config": {**doc["config"], key: bad}})
    partial = {k: v for k, v in doc["config"].items() if k != key}
    assert cls.from_json({**doc, "config": partial}) == cls.from_json(doc)  # defaults fill in
