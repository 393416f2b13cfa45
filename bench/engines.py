"""Random-play speed of each rules engine on one core, and serialised state size."""

from __future__ import annotations

import time
from typing import Any

from services.engines.core.play import play_game
from services.engines.core.serial import state_to_bytes
from services.engines.registry import available_games, load_game

# Decisions per second each engine must reach in random play (issues 2, 3, 4).
TARGET_DECISIONS_PER_SECOND = {"crazy_cultists": 50_000, "trash_cult": 30_000, "tricky_cultists": 50_000}
STATE_BYTES_LIMIT = 4096


def _largest_state(game: str, seeds: range) -> int:
    spec = load_game(game)
    largest = 0
    for seed in seeds:
        state = spec.new_state(None, spec.max_players, seed)
        while not state.is_terminal():
            largest = max(largest, len(state_to_bytes(state)))
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            state.apply(seat, legal[(seed + state.decisions) % len(legal)])
        largest = max(largest, len(state_to_bytes(state)))
    return largest


def run(seconds_per_game: float = 8.0) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}}
    for game in available_games():
        spec = load_game(game)
        players = spec.default_players
        bots = ["random"] * players
        play_game(spec, None, players, 0, bots, record_actions=False)  # warm up
        games = decisions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds_per_game:
            rec = play_game(spec, None, players, 1000 + games, bots, record_actions=False)
            games += 1
            decisions += rec.decisions
        elapsed = time.perf_counter() - start
        dps = decisions / elapsed
        size = _largest_state(game, range(20))
        out[game] = {
            "players": players,
            "games": games,
            "decisions_per_second": round(dps),
            "games_per_second": round(games / elapsed, 2),
            "max_state_bytes": size,
        }
        out["targets"][f"{game} random decisions/s >= {TARGET_DECISIONS_PER_SECOND[game]:,}"] = (
            dps >= TARGET_DECISIONS_PER_SECOND[game]
        )
        out["targets"][f"{game} state <= {STATE_BYTES_LIMIT} bytes"] = size <= STATE_BYTES_LIMIT
        print(f"  {game}: {dps:,.0f} decisions/s, {games / elapsed:.1f} games/s, max state {size} B")
    return out
