"""`make bench` section `tune`: games a tune spends to reach its target, against a plain grid sweep.

The question is the real one: Crazy Cultists at 2 players (CC-2's switch on, random bots),
search `threshold` 8..14 and `starting_hand` 1..3 (21 configs) for seat 0 winning 45-55 %.
"Reaching the target" means the chosen config's confirmation on fresh seeds is
`confirmed` (its whole 95 % interval inside 45-55 %), judged the same way for both:

- **tune**: budgets doubling from 100 games; the first budget whose tune confirms.
- **grid**: every one of the 21 configs with n games (n doubling from 5), the config with
  the seat-0 rate nearest 50 % chosen; the first n x 21 whose choice confirms.

One seed is one draw of luck, so both are measured on several search seeds (the same
seeds for both) and compared by their medians. Figures are search games (the
confirmation, 2,000 fresh games per table for both, is not counted). It plays in this
process (one core) so the figure does not depend on the machine's free cores.
"""

from __future__ import annotations

import statistics
from typing import Any

from bench.load import load_average
from services.balance.tune.confirm import confirm
from services.balance.tune.evaluate import LocalRunner
from services.balance.tune.run import run_tune
from services.balance.tune.search import Evaluation, Search
from services.balance.tune.spec import parse_tune_spec

SPEC: dict[str, Any] = {
    "name": "bench: cc 2p first seat",
    "game": "crazy_cultists",
    "seed": 11,
    "players": [2],
    "config": {"two_players": True},
    "lineups": ["random"],
    "search": {"threshold": {"low": 8, "high": 14}, "starting_hand": {"low": 1, "high": 3}},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.45, 0.55]}],
    "racing": {"games": 25, "eta": 3, "rungs": 3, "batch": 6},
    "confirm": 2000,  # 1,000 proved nothing for either method (about +-3 points)
}
SEEDS = (11, 12, 13, 14, 15)
CONFIGS = [{"threshold": t, "starting_hand": h} for t in range(8, 15) for h in range(1, 4)]
MAX_TUNE_BUDGET = 12_800
MAX_GRID_PER_CONFIG = 640


def _tune(runner: LocalRunner, seed: int) -> dict[str, Any]:
    tries = []
    budget = 100
    while budget <= MAX_TUNE_BUDGET:
        summary = run_tune(parse_tune_spec({**SPEC, "seed": seed, "budget": budget}), runner)
        best = summary["best"]
        verdict = best["confirmed"]["verdict"] if best else "none"
        tries.append({"budget": budget, "spent": summary["search_games"], "verdict": verdict,
                      "config": best["config"] if best else None})  # fmt: skip
        if verdict == "confirmed":
            return {"games_to_target": summary["search_games"], "tries": tries}
        budget *= 2
    return {"games_to_target": None, "tries": tries}


def _grid(runner: LocalRunner, seed: int) -> dict[str, Any]:
    spec = parse_tune_spec({**SPEC, "seed": seed, "budget": 10**7})
    tries = []
    per_config = 5
    while per_config <= MAX_GRID_PER_CONFIG:
        search = Search(spec, runner)
        evs = [Evaluation(c) for c in CONFIGS]
        search.extend(evs, per_config)
        best = min(evs, key=lambda e: e.score)
        (conf,), _games = confirm(spec, [best.config], runner)
        tries.append({"per_config": per_config, "spent": search.spent, "verdict": conf["verdict"],
                      "config": best.config})  # fmt: skip
        if conf["verdict"] == "confirmed":
            return {"games_to_target": search.spent, "tries": tries}
        per_config *= 2
    return {"games_to_target": None, "tries": tries}


def _median(runs: list[dict[str, Any]]) -> float | None:
    """The median games to target; a run that never reached it counts as infinitely many."""
    values = [r["games_to_target"] if r["games_to_target"] is not None else float("inf") for r in runs]
    m = statistics.median(values)
    return None if m == float("inf") else m


def run() -> dict[str, Any]:
    runner = LocalRunner(1)
    load_before = load_average()[0]
    tune = [{"seed": s, **_tune(runner, s)} for s in SEEDS]
    grid = [{"seed": s, **_grid(runner, s)} for s in SEEDS]
    out: dict[str, Any] = {
        "load_average": round(load_before, 2),
        "load_average_after": load_average()[0],
        "seeds": list(SEEDS),
        "confirm_games": SPEC["confirm"],
        "tune": {"median_games_to_target": _median(tune), "runs": tune},
        "grid": {"median_games_to_target": _median(grid), "runs": grid},
    }
    t, g = out["tune"]["median_games_to_target"], out["grid"]["median_games_to_target"]
    if t and g:
        out["grid_over_tune"] = round(g / t, 2)
    out["targets"] = {"tune reaches a confirmed target in fewer games than the grid (medians)": bool(
        t is not None and (g is None or t < g)
    )}  # fmt: skip
    print(f"tune: median {t} games to target; grid: median {g}", flush=True)
    return out
