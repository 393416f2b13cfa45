"""Set up exact positions from the documented JSON state form (docs/state-json.md).

Scenario tests start from a fresh state's JSON, overwrite the fields the scenario is about,
and restore through `from_json`, so every fixture passes the same validation a state
arriving over gRPC does (a fixture that loses a card fails loudly, not silently).
"""

from __future__ import annotations

from typing import Any

from services.engines.core.game import GameSpec, State


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
