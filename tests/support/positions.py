"""Set up exact positions from the documented JSON state form (docs/state-json.md).

Scenario tests start from a fresh state's JSON, overwrite the fields the scenario is about,
and restore through `from_json`, so every fixture passes the same validation a state
arriving over gRPC does (a fixture that loses a card fails loudly, not silently).
"""

from __future__ import annotations

import random
from typing import Any

from services.engines.core.game import GameSpec, State
from services.engines.core.serial import state_to_bytes


def position(
    spec: GameSpec,
    players: int | None = None,
    seed: int = 0,
    config: dict[str, Any] | None = None,
    **fields: Any,
) -> State:
    doc = spec.new_state(config, players, seed).to_json()
    unknown = set(fields) - set(doc)
    if unknown:
        raise KeyError(f"no such state field(s): {sorted(unknown)}")
    doc.update(fields)
    state = spec.state_class.from_json(doc)
    state.log = []
    return state


def legal_labels(state: State, seat: int) -> list[str]:
    return [state.action_label(a) for a in state.legal_actions(seat)]


def act(state: State, seat: int, label: str) -> None:
    """Apply the legal action whose label is `label` (checked path, like the gateway)."""
    for a in state.legal_actions(seat):
        if state.action_label(a) == label:
            state.apply(seat, a)
            return
    raise AssertionError(f"{label!r} is not legal for seat {seat}; legal: {legal_labels(state, seat)}")


def assert_config_set_later_plays_alike(spec: GameSpec, config: Any, players: int, seed: int) -> None:
    """A state given `config` after `new_state` (a position set up by hand) must play as one
    made with it: games that read config values once per state must follow a config set on
    it since. Same random moves; equal legal lists at every step and equal final bytes."""
    made_so = spec.new_state(config, players, seed)
    given_later = spec.new_state(None, players, seed)
    given_later.config = config
    pick = random.Random(seed)
    while not made_so.is_terminal():
        seat = made_so.to_act()[0]
        legal = made_so.legal_actions(seat)
        assert given_later.legal_actions(seat) == legal
        action = pick.choice(legal)
        made_so.apply(seat, action)
        given_later.apply(seat, action)
    assert given_later.is_terminal()
    assert state_to_bytes(given_later) == state_to_bytes(made_so)
