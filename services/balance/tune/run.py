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
    best = search.best()
    summary: dict[str, Any] = {
        "tune": tune_id,
        "name": spec.name,
        "game": spec.game,
        "spec": spec.to_dict(),
        "budget": spec.budget,
        "search_games": search.spent,
        "trials": len(search.trials),
        "history": [t.to_dict() for t in search.trials],
        "best": None,
        "pareto": [],
        "printed_rules": _point(search.printed, spec) if search.printed.games else None,
        "stopped_early": search.stopped_early,
    }
    confirm_games = 0
    if best is not None:
        points = search.pareto() if len(spec.objectives) > 1 else [best]
        if best not in points:
            points.insert(0, best)
        if on_progress:
            on_progress({"spent": search.spent, "budget": spec.budget, "phase": "confirming"})
        confirmations, confirm_games = confirm(spec, [p.config for p in points], runner)
        entries = []
        for ev, conf in zip(points, confirmations, strict=True):
            entries.append({**_point(ev, spec), "confirmed": conf})
        summary["best"] = entries[points.index(best)]
        if len(spec.objectives) > 1:
            summary["pareto"] = entries
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
