"""`--local`: the same plan in a local process pool, no Redis and no Celery.

Each pool process runs `simulate_chunk` on the chunks of `plan.chunks(spec)`, exactly what
a Celery worker runs, and the results go through the same `build_summary`; so for one spec
the aggregates equal a Celery run's. Useful on a laptop, in the bench as the baseline
Celery is measured against, and for big one-off sweeps on a single large machine.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from services.engines.core.pools import pool_context

from .plan import Chunk, chunks
from .simulate import simulate_chunk
from .spec import SweepSpec
from .summary import build_summary, run_info


def _run(spec: SweepSpec, chunk: Chunk) -> dict[str, Any]:
    result = simulate_chunk(spec, chunk)
    assert result is not None  # no stop callback: always complete
    return result


def simulate_local(
    spec: SweepSpec,
    processes: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Every chunk's result; `on_progress(games_done, total_games)` after each chunk."""
    plan = chunks(spec)
    total = spec.total_games
    done = 0
    processes = processes or os.cpu_count() or 1
    results: list[dict[str, Any]] = []
    if processes == 1:
        for chunk in plan:
            results.append(_run(spec, chunk))
            done += chunk.games
            if on_progress:
                on_progress(done, total)
        return results
    with ProcessPoolExecutor(
        max_workers=processes,
        mp_context=pool_context(["services.balance.sweeps.simulate", "services.engines.registry"]),
    ) as pool:
        # Keep a bounded window of chunks in flight: the pool stays busy without holding
        # every result of a huge sweep in the queue at once.
        pending = set()
        queue = iter(plan)
        for chunk in queue:
            pending.add(pool.submit(_run, spec, chunk))
            if len(pending) >= processes * 4:
                break
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in finished:
                res = fut.result()
                results.append(res)
                done += res["games"]
                if on_progress:
                    on_progress(done, total)
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(pool.submit(_run, spec, nxt))
    return results


def run_local(
    spec: SweepSpec,
    processes: int | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    sweep_id: str = "local",
) -> tuple[dict[str, Any], dict[int, dict[str, Any]], list[dict[str, Any]]]:
    """(summary, replay records, chunk results) of the whole sweep run here."""
    started = time.time()
    results = simulate_local(spec, processes, on_progress)
    finished = time.time()
    summary, replays = build_summary(
        spec, results, sweep_id, run_info("local", started, finished, spec.total_games, processes=processes)
    )
    return summary, replays, results
