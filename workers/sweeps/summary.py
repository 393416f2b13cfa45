"""The JSON summary of a finished sweep, built the same way by Celery and by `--local`.

The summary separates what the games say (`aggregates`: a pure function of spec and
results, compared with `==` by the tests) from how this run went (`run`: ids, wall time,
games per second), so two runs of the same spec differ only in `run`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from .aggregate import aggregate, aggregate_partials
from .partial import CellPartial
from .simulate import replay_record
from .spec import SweepSpec


def build_summary(
    spec: SweepSpec,
    results: Iterable[dict[str, Any]],
    sweep_id: str,
    run: dict[str, Any],
    partials: dict[int, CellPartial] | None = None,
) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """(summary, replay records by cell): the representative game of every cell, replayable.

    From chunk `results` (folded here), or from every cell's merged `partials` (the
    workers folded their own chunks; `results` is then not read)."""
    tally = {"chunks": 0, "seconds": 0.0}

    def counted(stream: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for result in stream:  # one chunk at a time: `results` may stream from Redis
            tally["chunks"] += 1
            tally["seconds"] += result.get("seconds", 0.0)
            yield result

    if partials is None:
        aggregates = aggregate(spec, counted(results))
    else:
        aggregates = aggregate_partials(spec, partials)
        tally["chunks"] = sum(p.chunks for p in partials.values())
        tally["seconds"] = sum(p.seconds for p in partials.values())
    replays: dict[int, dict[str, Any]] = {}
    for cell in aggregates["cells"]:
        rep = cell["representative"]
        if rep is not None:
            replays[cell["cell"]] = replay_record(spec, cell["cell"], rep["game_index"])
    summary = {
        "sweep": sweep_id,
        "name": spec.name,
        "game": spec.game,
        "spec": spec.to_dict(),
        "run": {
            **run,
            "chunks": tally["chunks"],
            "cpu_seconds_simulating": round(tally["seconds"], 3),
            "aggregated_at": time.time(),
        },
        "aggregates": aggregates,
    }
    return summary, replays


def run_info(mode: str, started: float, finished: float, games: int, **extra: Any) -> dict[str, Any]:
    seconds = max(finished - started, 1e-9)
    return {
        "mode": mode,
        "started": started,
        "finished": finished,
        "seconds": round(seconds, 3),
        "games_per_second": round(games / seconds, 2),
        **extra,
    }
