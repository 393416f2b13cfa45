"""Positions the bot tests share: real decision points from seeded games of each game."""

from __future__ import annotations

import random
from dataclasses import fields
from pathlib import Path
from typing import Any

from services.engines.core.bots import make_bot
from services.engines.core.game import GameSpec, State
from services.engines.registry import load_game

# (game, players) pairs the tests cover: each game at a table size it is played at.
TABLES = [("crazy_cultists", 3), ("trash_cult", 2), ("trash_cult", 4), ("tricky_cultists", 4)]

# A cheap but complete IS-MCTS: depth-limited rollouts, the heuristic guide, few iterations.
SMALL = "ismcts:iterations=24,depth=6,prior=1"


def decision_points(spec: GameSpec, players: int, seed: int, count: int, every: float = 0.15) -> list[State]:
    """States along a heuristic-vs-random game where the deciding seat has a real choice."""
    pick = random.Random(seed)
    bots = [make_bot(spec, "heuristic" if s % 2 else "random", seed + s) for s in range(players)]
    found: list[State] = []
    game = seed
    while len(found) < count:
        state = spec.new_state(None, players, game)
        game += 1000
        while not state.is_terminal() and len(found) < count:
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            if len(legal) > 1 and pick.random() < every:
                found.append(state.clone())
            state.apply(seat, bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0])
    return found


BOTS_DOC = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def assert_numeric_fields_covered(
    config_class: Any, tested: set[str], unused: dict[str, str], opening: str
) -> None:
    """Every numeric config field is either tested (it changes a heuristic choice) or
    explained: `unused` maps a field to the words of the docs/bots.md paragraph that begins
    with `opening` saying why it cannot matter. A new field fails until someone decides."""
    numeric = {f.name for f in fields(config_class) if f.type in (int, "int")}
    assert numeric == tested | set(unused), "a numeric field is neither tested nor explained"
    doc = BOTS_DOC.read_text()
    start = doc.index(opening)
    paragraph = doc[start : doc.index("\n\n", start)]
    for field, words in unused.items():
        assert words in paragraph, f"docs/bots.md does not say why {field} cannot matter"


def spec_of(game: str) -> GameSpec:
    return load_game(game)
