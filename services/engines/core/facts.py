"""What a game's sweep facts hook shares: which seats played what, by the game's own words.

Each game may answer the balance breakdowns' questions ("is a cult too strong?", "does
playing this card win?") with a `facts(state, actions, bots)` function in its package's
`sweep_facts.py` (services/balance/sweeps/facts.py says the shape and finds it through the
registry). Hooks read only public things: the final state's spectator view, the game's
`action_detail` of the recorded actions, and the line-up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .game import State


def played(state: State, actions: Sequence[Sequence[int]], label: Callable[[dict[str, Any]], str | None]):
    """label -> sorted seats that took an action the game describes with that label."""
    seats: dict[str, set[int]] = {}
    detail = state.action_detail
    cache: dict[int, str | None] = {}
    for seat, action in actions:
        if action not in cache:
            cache[action] = label(detail(action))
        name = cache[action]
        if name is not None:
            seats.setdefault(name, set()).add(seat)
    return {name: sorted(s) for name, s in sorted(seats.items())}
