"""What a determinisation costs: `resample_hidden` per game, and how often Tricky Cultists'
re-deal has revealed voids to keep (`suit_limits`) and needs its suit-count search.

Positions are the decision points of heuristic-vs-random games; every seat re-deals each
position several times. The figure that matters is microseconds per re-deal next to the
IS-MCTS iteration it is part of (docs/bots.md).
"""

from __future__ import annotations

import random
import time
from typing import Any

from bench.load import load_average
from services.engines.core import decks
from services.engines.core.bots import make_bot
from services.engines.core.rng import Rng
from services.engines.registry import load_game

TABLES = {"crazy_cultists": 4, "trash_cult": 4, "tricky_cultists": 4}


def _positions(game: str, players: int, games: int) -> list[Any]:
    spec = load_game(game)
    out = []
    pick = random.Random(5)
    for seed in range(games):
        state = spec.new_state(None, players, seed)
        bots = [make_bot(spec, "heuristic" if s % 2 else "random", seed + s) for s in range(players)]
        while not state.is_terminal():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            if pick.random() < 0.3:
                out.append(state.clone())
            state.apply(seat, bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0])
    return out


def run(games: int = 12, repeats: int = 5) -> dict[str, Any]:
    out: dict[str, Any] = {"load_average": load_average()}
    searches = 0
    original = decks._kind_counts

    def counted(*args: Any) -> Any:
        nonlocal searches
        searches += 1
        return original(*args)

    decks._kind_counts = counted  # type: ignore[assignment]  # count how often the plain re-deal did not fit
    try:
        for game, players in TABLES.items():
            positions = _positions(game, players, games)
            searches = 0
            calls, spent = _resample_all(positions, players, repeats)
            row: dict[str, Any] = {
                "positions": len(positions),
                "resamples": calls,
                "us_per_resample_incl_clone": round(spent / calls * 1e6, 1),
            }
            if game == "tricky_cultists":
                row["us_per_resample_ignoring_voids"] = _ignoring_voids(positions, players, repeats)
                limited = sum(1 for s in positions if any(s.suit_limits))
                row["positions_with_revealed_voids"] = round(limited / len(positions), 3)
                row["resamples_needing_the_suit_count_search"] = round(searches / calls, 3)
            out[game] = row
            print(f"  {game}: {row}", flush=True)
    finally:
        decks._kind_counts = original
    return out


def _ignoring_voids(positions: list[Any], players: int, repeats: int) -> float:
    """The same re-deals with the voids left out (a plain re-deal), for comparison."""
    from services.engines.tricky_cultists import rules

    keep = rules.redeal_limited
    rules.redeal_limited = lambda zones, _limits, _kinds, rng: decks.redeal(zones, rng)  # type: ignore[assignment, misc]
    try:
        calls, spent = _resample_all(positions, players, repeats)
        return round(spent / calls * 1e6, 1)
    finally:
        rules.redeal_limited = keep


def _resample_all(positions: list[Any], players: int, repeats: int) -> tuple[int, float]:
    """Every observer's re-deals of every position, on fixed seeds: (calls, seconds spent)."""
    calls = 0
    start = time.perf_counter()
    for i, state in enumerate(positions):
        for observer in range(players):
            for r in range(repeats):
                twin = state.clone()
                twin.resample_hidden(observer, Rng(i * 1000 + observer * 10 + r))
                calls += 1
    return calls, time.perf_counter() - start
