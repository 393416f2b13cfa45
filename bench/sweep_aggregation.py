"""Aggregating a sweep: time and peak memory for 1,000,000 games of chunk results.

The chunk results are synthetic (random winners, lengths and card plays, Crazy Cultists
shaped: 8 cells of 4 players, 250 games a chunk, 8 cards played a game). Aggregation has
two halves, measured apart:

- **fold** (on the workers, in parallel, one chunk at a time as it is played): a chunk
  result -> its partial aggregate (services/balance/sweeps/partial.py), packed as stored. Reported
  as CPU seconds per million games for one process.
- **merge** (the finish task, one process): the stored partials streamed back, merged and
  turned into the aggregates, then the paired comparisons of every cell with its base cell
  counted from the chunk results read back one block of seeds at a time (paired.py) — what
  `finish` does, minus Redis round trips and replays. It runs in a fresh process per size so
  its peak resident memory (ru_maxrss) is its own; the paired pass is also timed alone.

Two sizes (100,000 and 1,000,000 games) show that the merge's memory stays flat with games;
docs/sweeps.md computes what a 10M-game night costs from these figures.
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.load import load_average

ROOT = Path(__file__).resolve().parents[1]
SIZES = tuple(int(x) for x in os.environ.get("BENCH_AGG_SIZES", "100000,1000000").split(","))
CELLS_GRID: dict[str, list[Any]] = {
    "variant": ["base", "devilish", "fiendish", "beast"],
    "dark_powers": [False, True],
}
CHUNK = 250
CARDS = [f"card {i}" for i in range(30)]


def _spec(games_per_cell: int) -> dict[str, Any]:
    return {"game": "crazy_cultists", "seed": 1, "games": games_per_cell, "players": [4], "chunk": CHUNK,
            "grid": CELLS_GRID, "lineups": ["random"]}  # fmt: skip


def _chunk_results(spec: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """(chunk, synthetic result) for every chunk of the plan, reproducibly."""
    from services.balance.sweeps.plan import chunks

    rng = random.Random(7)
    for chunk in chunks(spec):
        n = chunk.games
        winners = [[] if rng.random() < 0.02 else [rng.randrange(4)] for _ in range(n)]
        yield chunk, {
            "chunk": chunk.id, "cell": chunk.cell, "start": chunk.start, "games": n,
            "winners": winners, "turns": [rng.randint(15, 120) for _ in range(n)],
            "decisions": [rng.randint(40, 400) for _ in range(n)],
            "capped": [int(not w and rng.random() < 0.5) for w in winners],
            "facts": [{"played": {c: [rng.randrange(4)] for c in rng.sample(CARDS, 8)}} for _ in range(n)],
            "seconds": 1.0,
        }  # fmt: skip


PARQUET_GAMES = 100_000


def _parquet(tmp: Path) -> dict[str, Any]:
    """Per-game Parquet records of 100,000 synthetic games: bytes a game, and a lookup by seed."""
    from services.balance.sweeps.aggregate import game_rows
    from services.balance.sweeps.records import find_games, write_game_records
    from services.balance.sweeps.spec import parse_spec

    cells = len(CELLS_GRID["variant"]) * len(CELLS_GRID["dark_powers"])
    spec = parse_spec(_spec(PARQUET_GAMES // cells))
    out = tmp / "report"
    out.mkdir()
    started = time.perf_counter()
    rows = write_game_records(out, game_rows(spec, (r for _c, r in _chunk_results(spec))), csv_too=True)
    written = time.perf_counter() - started
    parquet = sum(f.stat().st_size for f in (out / "games").rglob("*.parquet"))
    csv_size = (out / "games.csv").stat().st_size
    started = time.perf_counter()
    found = find_games(out / "games", spec.seed + PARQUET_GAMES // cells // 2)
    lookup = time.perf_counter() - started
    assert rows == spec.total_games and len(found) == cells
    return {
        "games": rows,
        "parquet_bytes_per_game": round(parquet / rows, 1),
        "csv_bytes_per_game": round(csv_size / rows, 1),
        "write_seconds_with_csv": round(written, 2),
        "lookup_by_seed_seconds": round(lookup, 3),
    }


def _write_partials(path: Path, total_games: int) -> dict[str, Any]:
    """Synthetic chunk results, folded into partials (timed) and packed as stored, in one file."""
    from services.balance.sweeps.partial import of_chunk
    from services.balance.sweeps.simulate import pack
    from services.balance.sweeps.spec import parse_spec

    cells = len(CELLS_GRID["variant"]) * len(CELLS_GRID["dark_powers"])
    spec_dict = _spec(total_games // cells)
    spec = parse_spec(spec_dict)
    result_bytes = partial_bytes = 0
    fold_seconds = 0.0
    with path.open("wb") as fh, path.with_suffix(".results").open("wb") as results:
        for chunk, result in _chunk_results(spec):  # block-major, as the finish reads them
            packed = pack(result)
            results.write(struct.pack("<IH", len(packed), chunk.block) + packed)
            result_bytes += len(packed)
            started = time.process_time()
            blob = pack(of_chunk(spec, result).to_dict())
            fold_seconds += time.process_time() - started
            fh.write(struct.pack("<IH", len(blob), chunk.cell) + blob)
            partial_bytes += len(blob)
    return {
        "spec": spec_dict,
        "games": spec.total_games,
        "result_bytes": result_bytes,
        "partial_bytes": partial_bytes,
        "fold_cpu_seconds": fold_seconds,
    }


CHILD = r"""
import json, resource, struct, sys, time
from services.balance.sweeps.aggregate import aggregate_partials
from services.balance.sweeps.paired import count_blocks
from services.balance.sweeps.partial import CellPartial, merge_all
from services.balance.sweeps.simulate import unpack
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.summary import add_paired

spec = parse_spec(json.loads(sys.argv[2]))
def stream(path):
    with open(path, "rb") as fh:
        while head := fh.read(6):
            size, cell = struct.unpack("<IH", head)
            yield cell, CellPartial.from_dict(unpack(fh.read(size)))
def blocks(path):  # one block of seeds (every cell's chunk of it) at a time, as finish reads Redis
    block, current = {}, None
    with open(path, "rb") as fh:
        while head := fh.read(6):
            size, number = struct.unpack("<IH", head)
            if number != current and block:
                yield block
                block = {}
            current = number
            result = unpack(fh.read(size))
            block[result["cell"]] = result
    if block:
        yield block
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
agg = aggregate_partials(spec, merge_all(spec, stream(sys.argv[1])))
merged, cpu = time.perf_counter(), time.process_time()
add_paired(spec, agg, count_blocks(spec, blocks(sys.argv[3])))
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "paired_seconds": seconds - (merged - start), "paired_cpu_seconds": cpu,
                  "peak_rss_mb": peak / 1024, "rss_before_mb": base / 1024,
                  "games_counted": agg["games_counted"], "cells": len(agg["cells"]),
                  "paired_rows": len(agg["paired"]), "paired_games": sum(r["games"] for r in agg["paired"]
                                                                        if r["kind"] == "turns")}))
"""


def _measure(path: Path, spec: dict[str, Any]) -> dict[str, Any]:
    import json

    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), json.dumps(spec), str(path.with_suffix(".results"))],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


SIMULATE_GAMES = 400


def _simulation_rate() -> dict[str, float]:
    """Games per second of one process simulating the nightly's kind of game (Crazy
    Cultists, 4 players, heuristic bots in every seat) and the cheapest (random bots)."""
    from services.balance.sweeps.plan import chunks
    from services.balance.sweeps.simulate import simulate_chunk
    from services.balance.sweeps.spec import parse_spec

    out = {}
    for name, lineup in (("heuristic", "heuristic"), ("random", "random")):
        spec = parse_spec({"game": "crazy_cultists", "seed": 3, "games": SIMULATE_GAMES, "players": [4],
                           "chunk": SIMULATE_GAMES, "lineups": [lineup]})  # fmt: skip
        started = time.process_time()
        simulate_chunk(spec, chunks(spec)[0])
        out[f"{name}_games_per_cpu_second"] = round(SIMULATE_GAMES / (time.process_time() - started), 1)
    return out


def run() -> dict[str, Any]:
    results: dict[str, Any] = {"sizes": {}, "simulation": _simulation_rate()}
    print(f"  simulation, one process: {results['simulation']}")
    with tempfile.TemporaryDirectory(prefix="cultists-bench-agg-") as tmp:
        for games in SIZES:
            path = Path(tmp) / f"partials-{games}.bin"
            made = _write_partials(path, games)
            m = _measure(path, made["spec"])
            assert m["games_counted"] == made["games"]
            # Every cell but the first grid entry's paired with it on every seed (7 of 8).
            assert m["paired_games"] == made["games"] * 7 // 8
            entry = {
                "games": made["games"],
                "cells": m["cells"],
                "chunks": made["games"] // CHUNK,
                "chunk_results_mb": round(made["result_bytes"] / 1e6, 1),
                "partials_mb": round(made["partial_bytes"] / 1e6, 1),
                "fold_cpu_seconds": round(made["fold_cpu_seconds"], 2),
                "fold_cpu_seconds_per_million_games": round(
                    made["fold_cpu_seconds"] * 1e6 / made["games"], 1
                ),
                "merge_seconds": round(m["seconds"], 2),
                "paired_seconds": round(m["paired_seconds"], 2),
                "paired_cpu_seconds": round(m["paired_cpu_seconds"], 2),
                "paired_rows": m["paired_rows"],
                "merge_peak_rss_mb": round(m["peak_rss_mb"], 1),
                "merge_rss_growth_mb": round(m["peak_rss_mb"] - m["rss_before_mb"], 1),
            }
            results["sizes"][str(games)] = entry
            print(
                f"  {games:,} games ({entry['cells']} cells, {entry['chunks']:,} chunks): fold "
                f"{entry['fold_cpu_seconds']} CPU s on the workers; finish merges "
                f"{entry['partials_mb']} MB of partials and pairs every cell with its base "
                f"({entry['paired_rows']} comparisons, {entry['paired_seconds']} s of it, "
                f"{entry['paired_cpu_seconds']} CPU s) in "
                f"{entry['merge_seconds']} s, peak RSS "
                f"{entry['merge_peak_rss_mb']} MB (+{entry['merge_rss_growth_mb']} MB merging); "
                f"chunk results {entry['chunk_results_mb']} MB"
            )
            path.unlink()
            path.with_suffix(".results").unlink()
        results["parquet"] = _parquet(Path(tmp))
        print(f"  per-game records: {results['parquet']}")
    small, big = (results["sizes"][str(s)] for s in SIZES)
    results["memory_ratio_1m_vs_100k"] = round(big["merge_peak_rss_mb"] / small["merge_peak_rss_mb"], 2)
    results["load_average_1m"] = load_average()[0]
    # Memory must grow with cells, not games: 10x the games within 1.25x the peak memory.
    results["targets"] = {"memory_flat_in_games": results["memory_ratio_1m_vs_100k"] <= 1.25}
    return results
