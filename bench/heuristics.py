"""The games' own heuristic bots against random ones, at the sizes issues 3 and 4 name.

Trash Cult: one heuristic against three random bots at 4 players, the heuristic taking
each seat in turn on the same deal (500 deals x 4 seats = 2,000 games; fair share 1/4).
Tricky Cultists: a heuristic team against a random team with partnerships swapped on the
same deals (1,000 deals x 2 = 2,000 games; fair share 1/2). Win rates carry 95% Wilson
intervals (services.engines.core.stats.wilson, the sweeps' own).
"""

from __future__ import annotations

import time
from typing import Any

from services.engines.core.ladder import play_ladder
from services.engines.core.play import play_game
from services.engines.core.stats import wilson
from services.engines.registry import load_game

SEED = 30_000


def _trash_cult(deals: int = 500) -> dict[str, Any]:
    spec = load_game("trash_cult")
    wins = games = draws = 0
    start = time.perf_counter()
    for deal in range(deals):
        for hero in range(4):
            seats = ["random"] * 4
            seats[hero] = "heuristic"
            record = play_game(spec, None, 4, SEED + deal, seats, record_actions=False)
            games += 1
            wins += hero in record.winners
            draws += not record.winners
    low, high = wilson(wins, games)
    return {
        "lineup": "heuristic vs three random, 4 players, heuristic in every seat of each deal",
        "games": games,
        "draws": draws,
        "win_rate": round(wins / games, 4),
        "wilson_95": [round(low, 4), round(high, 4)],
        "fair_share": 0.25,
        "seconds": round(time.perf_counter() - start, 1),
    }


def _tricky_cultists(deals: int = 1000) -> dict[str, Any]:
    result = play_ladder(
        load_game("tricky_cultists"), None, 4, ["heuristic", "random"], deals, seed=SEED, jobs=2
    )
    hero = next(row for row in result.to_dict()["standings"] if row["bot"] == "heuristic")
    return {
        "lineup": "heuristic team vs random team, partnerships swapped on the same deals",
        "games": result.to_dict()["games"],
        "draws": result.to_dict()["draws"],
        "win_rate": round(hero["win_rate"], 4),
        "wilson_95": [round(hero["wilson_low"], 4), round(hero["wilson_high"], 4)],
        "fair_share": hero["fair_share"],
        "seconds": round(result.to_dict()["seconds"], 1),
    }


def run() -> dict[str, Any]:
    out: dict[str, Any] = {"trash_cult": _trash_cult(), "tricky_cultists": _tricky_cultists()}
    out["targets"] = {
        f"{game} heuristic beats random clearly (Wilson low > fair share)": row["wilson_95"][0]
        > row["fair_share"]
        for game, row in out.items()
    }
    for game in ("trash_cult", "tricky_cultists"):
        row = out[game]
        print(
            f"  {game}: {row['lineup']}: {row['win_rate']:.1%} {row['wilson_95']} over {row['games']} games"
        )
    return out
