"""The JSON summary of a finished sweep, built the same way by Celery and by `--local`.

The summary separates what the games say (`aggregates`: a pure function of spec and
results, compared with `==` by the tests) from how this run went (`run`: ids, wall time,
games per second), so two runs of the same spec differ only in `run`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from .aggregate import aggregate_partials
from .paired import PairCounts, blocks_of, compare_with_base, count_blocks
from .partial import CellPartial, fold
from .significance import apply_family
from .simulate import replay_record
from .spec import SweepSpec


def build_summary(
    spec: SweepSpec,
    results: Iterable[dict[str, Any]],
    sweep_id: str,
    run: dict[str, Any],
    partials: dict[int, CellPartial] | None = None,
    paired: dict[int, PairCounts] | None = None,
) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
    """(summary, replay records by cell): the representative game of every cell, replayable.

    From chunk `results`, or from every cell's merged `partials` (the workers folded their
    own chunks) together with every cell's `paired` counts against its base cell
    (paired.count_blocks, streamed block by block); `results` is then not read."""
    if partials is None:
        results = list(results)
        partials = fold(spec, results)
        paired = count_blocks(spec, blocks_of(results))
    elif paired is None:
        raise ValueError("build_summary from partials needs the cells' paired counts too")
    aggregates = aggregate_partials(spec, partials)
    add_paired(spec, aggregates, paired)
    tally = {
        "chunks": sum(p.chunks for p in partials.values()),
        "seconds": sum(p.seconds for p in partials.values()),
    }
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


def add_paired(spec: SweepSpec, aggregates: dict[str, Any], paired: dict[int, PairCounts]) -> None:
    """Compare every cell with its base cell on the same seeds, and re-run the report's BH
    family with those comparisons in it (significance.py)."""
    aggregates["paired"] = compare_with_base(spec, paired)
    apply_family(aggregates)


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
