"""Per-game facts beyond the GameRecord, read from a finished game for the balance breakdowns.

A GameRecord says who won and how long it took; designers also ask "is a cult too
strong?", "does one partnership of bots carry?", "does playing this card win?". Each game
answers through one hook in its own package (`sweep_facts.py`, found through the registry),
that reads only public things —
the final state's spectator view (`state.view(None)`, rulings G-3), the game's own
`action_detail` for the recorded actions, and the line-up — so sweeps never depend on an
engine's private fields and an engine refactor cannot silently change a report.

Every hook returns the same two-part shape, which `aggregate.py` handles generically:

    {"groups": {"cult": ["Rat", "Skunk", ...]},        # one label per seat, by breakdown
     "played": {"Pigeon Thief": [0, 2], ...},          # label -> seats that played it
     "outcomes": {"Win Most Tricks": [3, 5], ...}}     # optional: label -> [met, tried]

`groups` become win-rate tables (by cult, team, partnership); `played` becomes play rate
and win-when-played rate per card or agenda; `outcomes` become success rates (Tricky
Cultists' agendas: met in how many of the rounds a seat kept one). A hook leaves out what
the state does not tell; a game without a hook simply gets no such tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from services.engines.core.game import State
from services.engines.registry import GAMES, has_part, load_part

FactsHook = Callable[[State, Sequence[Sequence[int]], Sequence[str]], dict[str, Any]]


_HOOKS: dict[str, FactsHook | None] = {}


def facts_hook(game: str) -> FactsHook | None:
    """The game's hook (`facts` in its package's `sweep_facts.py`); None when it has none.
    Looked up once per game (a sweep asks for every game it plays)."""
    if game not in _HOOKS:
        if game not in GAMES:
            return None
        _HOOKS[game] = load_part(game, "sweep_facts").facts if has_part(game, "sweep_facts") else None
    return _HOOKS[game]
