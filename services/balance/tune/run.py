"""A whole tune: search, confirm, summarise. The one entry point the CLI (and an API) call.

The JSON summary:

    {"best": {"config": {...}, "objectives": {...}, "confirmed": {"verdict": ..., "objectives": [...]}},
     "pareto": [...],            # several objectives: each front point, confirmed alike
     "printed_rules": {...},     # the rules as printed at the search's first rung
     "stopped_early": bool,      # they met every target there: nothing was searched
     "trials": N, "games": M,    # M = search games + confirmation games
     "search_games": ..., "confirm_games": ..., "budget": ...,
     "history": [...],           # every trial: config, games, losses, measures
     "spec": {...}, "run": {...}}
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .confirm import confirm
from .evaluate import Runner
from .search import Evaluation, Search
from .spec import TuneSpec


def _point(ev: Evaluation, spec: TuneSpec) -> dict[str, Any]:
    return {
        "config": ev.config,
        "games": ev.games,
        "score": round(ev.score, 6),
        "guards": ev.guards,
        "objectives": {
            obj.label: {**m, "loss": round(loss, 6)}
            for obj, m, loss in zip(spec.objectives, ev.measures, ev.losses, strict=True)
        },
    }


def _confirmed(
    spec: TuneSpec, search: Search, runner: Runner, on_progress: Callable[[dict[str, Any]], None] | None
) -> tuple[dict[str, Any] | None, list[dict[str, Any]], int]:
    """(best point, Pareto points, confirmation games) of the search as it stands."""
    best = search.best()
    if best is None:
        return None, [], 0
    points = search.pareto() if len(spec.objectives) > 1 else [best]
    if best not in points:
        points.insert(0, best)
    if on_progress:
        on_progress({"spent": search.spent, "budget": spec.budget, "phase": "confirming"})
    confirmations, games = confirm(spec, [p.config for p in points], runner)
    entries = [
        {**_point(ev, spec), "confirmed": conf} for ev, conf in zip(points, confirmations, strict=True)
    ]
    return entries[points.index(best)], entries if len(spec.objectives) > 1 else [], games


def run_tune(
    spec: TuneSpec,
    runner: Runner,
    tune_id: str = "local",
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    mode: str = "local",
) -> dict[str, Any]:
    """Search within the budget, confirm the answer on fresh seeds, and say how it went."""
    started = time.time()
    search = Search(spec, runner, on_progress)
    search.run()
    best, pareto, confirm_games = _confirmed(spec, search, runner, on_progress)
    overturned = False
    if search.stopped_early and best is not None and best["confirmed"]["verdict"] != "no_change_needed":
        # The printed rules' first look was on target, their proof on fresh games was not:
        # the shortcut does not hold, so search after all (the first look is kept).
        overturned = True
        search.stopped_early = False
        search.run(allow_early_stop=False)
        best, pareto, more = _confirmed(spec, search, runner, on_progress)
        confirm_games += more
    summary: dict[str, Any] = {
        "tune": tune_id,
        "name": spec.name,
        "game": spec.game,
        "spec": spec.to_dict(),
        "budget": spec.budget,
        "search_games": search.spent,
        "trials": len(search.trials),
        "history": [t.to_dict() for t in search.trials],
        "best": best,
        "pareto": pareto,
        "printed_rules": _point(search.printed, spec) if search.printed.games else None,
        "stopped_early": search.stopped_early,
        "early_stop_overturned": overturned,
    }
    summary["confirm_games"] = confirm_games
    summary["games"] = search.spent + confirm_games
    finished = time.time()
    summary["run"] = {
        "mode": mode,
        "started": started,
        "finished": finished,
        "seconds": round(finished - started, 3),
    }
    return summary
