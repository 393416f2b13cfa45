"""`make bench` section `tune`: games a tune spends to reach its target, against a plain grid sweep.

The question is the real one: Crazy Cultists at 2 players (CC-2's switch on, random bots),
search `threshold` 8..14 and `starting_hand` 1..3 (21 configs) for seat 0 winning 45-55 %.
"Reaching the target" means the chosen config's confirmation on fresh seeds is
`confirmed` (its whole 95 % interval inside 45-55 %), judged the same way for both:

- **tune**: budgets doubling from 500 games; the first budget whose tune confirms.
- **grid**: every one of the 21 configs with n games (n doubling from 25), the config with
  the seat-0 rate nearest 50 % chosen; the first n x 21 whose choice confirms.

Figures are search games (the confirmation, the same size for both, is not counted).
"""

from __future__ import annotations

import os
from typing import Any

from workers.tune.confirm import confirm
from workers.tune.evaluate import LocalRunner
from workers.tune.run import run_tune
from workers.tune.search import Evaluation, Search
from workers.tune.spec import parse_tune_spec

SPEC: dict[str, Any] = {
    "name": "bench: cc 2p first seat",
    "game": "crazy_cultists",
    "seed": 11,
    "players": [2],
    "config": {"two_players": True},
    "lineups": ["random"],
    "search": {"threshold": {"low": 8, "high": 14}, "starting_hand": {"low": 1, "high": 3}},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.45, 0.55]}],
    "racing": {"games": 50, "eta": 3, "rungs": 3, "batch": 6},
    "confirm": 2000,  # 1,000 proved nothing for either method (see docs/tune.md)
}


def _tune(runner: LocalRunner) -> dict[str, Any]:
    tries = []
    budget = 500
    while budget <= 8000:
        summary = run_tune(parse_tune_spec({**SPEC, "budget": budget}), runner)
        verdict = summary["best"]["confirmed"]["verdict"] if summary["best"] else "none"
        tries.append({"budget": budget, "spent": summary["search_games"], "verdict": verdict,
                      "config": summary["best"]["config"] if summary["best"] else None})  # fmt: skip
        if verdict == "confirmed":
            return {"games_to_target": summary["search_games"], "tries": tries}
        budget *= 2
    return {"games_to_target": None, "tries": tries}


def _grid(runner: LocalRunner) -> dict[str, Any]:
    spec = parse_tune_spec({**SPEC, "budget": 10**7})
    configs = [{"threshold": t, "starting_hand": h} for t in range(8, 15) for h in range(1, 4)]
    tries = []
    per_config = 25
    while per_config <= 800:
        search = Search(spec, runner)
        evs = [Evaluation(c) for c in configs]
        search.extend(evs, per_config)
        best = min(evs, key=lambda e: e.score)
        (conf,), _games = confirm(spec, [best.config], runner)
        tries.append({"per_config": per_config, "spent": search.spent, "verdict": conf["verdict"],
                      "config": best.config})  # fmt: skip
        if conf["verdict"] == "confirmed":
            return {"games_to_target": search.spent, "tries": tries}
        per_config *= 2
    return {"games_to_target": None, "tries": tries}


def run() -> dict[str, Any]:
    runner = LocalRunner(2)
    load = os.getloadavg()[0]
    tune, grid = _tune(runner), _grid(runner)
    out: dict[str, Any] = {"load_average": round(load, 2), "tune": tune, "grid": grid}
    if tune["games_to_target"] and grid["games_to_target"]:
        out["grid_over_tune"] = round(grid["games_to_target"] / tune["games_to_target"], 2)
    print(f"tune: {tune['games_to_target']} games to target; grid: {grid['games_to_target']}", flush=True)
    return out
