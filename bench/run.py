"""`make bench`: every speed and strength figure, measured in one run, written to
bench/results.json. Machines here are noisy, so targets are checked as ratios measured in
the same run (Apply vs an empty call on the same server), never as timed unit tests.

`python -m bench.run engines grpc` runs only the named sections; `--quick` (`make
bench-quick`) the sections that finish in about a minute each, a few minutes in all.
`--help` lists every section with how long it took in the last recorded run.

Every run rewrites two kinds of tracked files, and says so first: bench/results.json (the
sections it ran; the others keep their figures) and the figure tables of the docs pages
(bench/docs.py) made from it. `python -m bench.run --docs` does only the second.
"""

from __future__ import annotations

import datetime
import json
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import services.engines

from . import (
    bots,
    determinisation,
    docs,
    drift,
    engine_bounds,
    engines,
    fairness,
    flood,
    gateway,
    grpc_latency,
    heuristics,
    logins,
    power,
    redis_cost,
    streams,
    sweep_aggregation,
    sweeps,
    tune,
    web_play,
)
from .load import load_average

SECTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "engines": engines.run,
    "grpc": grpc_latency.run,
    "engine_bounds": engine_bounds.run,
    "gateway": gateway.run,
    "redis_cost": redis_cost.run,
    "flood": flood.run,
    "fairness": fairness.run,
    "streams": streams.run,
    "logins": logins.run,
    "sweeps": sweeps.run,
    "sweep_aggregation": sweep_aggregation.run,
    "drift": drift.run,
    "heuristics": heuristics.run,
    "bots": bots.run,
    "determinisation": determinisation.run,
    "tune": tune.run,
    "power": power.run,
    "web_play": web_play.run,
}
RESULTS = Path(__file__).with_name("results.json")
# The sections that finish in about a minute each on the project's 2-core machines
# (`make bench-quick`): the others take from 2 minutes (engines, gateway) to 20 (bots).
QUICK = ["flood", "sweep_aggregation", "drift", "determinisation", "heuristics"]


def duration(results: dict, name: str) -> str:
    """`12 min` from the section's last recorded wall time, or `not measured yet`."""
    seconds = (results.get(name) or {}).get("wall_seconds")
    if not seconds:
        return "not measured yet"
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def main(argv: list[str]) -> int:
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        print("\nsections (last run's wall time):")
        for name, measure in SECTIONS.items():
            module = sys.modules[measure.__module__]
            quick = "  [quick]" if name in QUICK else ""
            summary = (module.__doc__ or "").strip().splitlines()[0]
            print(f"  {name:<17} {duration(results, name):>16}{quick}  {summary}")
        return 0
    if argv == ["--docs"]:
        return _docs(results)
    chosen = QUICK if argv == ["--quick"] else argv or list(SECTIONS)
    unknown = [s for s in chosen if s not in SECTIONS]
    if unknown:
        print(f"unknown section(s) {unknown}; known: {list(SECTIONS)}", file=sys.stderr)
        return 2
    print(
        f"bench: {', '.join(chosen)}; rewrites {RESULTS.relative_to(RESULTS.parents[1])} "
        f"(these sections) and the figure tables of {', '.join(str(p.relative_to(docs.DOCS.parent)) for p in docs.pages())}",
        flush=True,
    )
    results["machine"] = {
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
    }
    failed = []
    for name in chosen:
        print(f"== {name} (last run: {duration(results, name)})", flush=True)
        start = time.perf_counter()
        section = SECTIONS[name]()
        section["wall_seconds"] = round(time.perf_counter() - start, 2)
        # When, and how busy the machine was: the docs print both beside every figure.
        section["measured_at"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        section["load_average_at_end"] = load_average()
        # Whether the engines' compiled modules were there to load (make install builds them).
        section["engines_compiled"] = services.engines.compiled()
        results[name] = section
        failed += [f"{name}: {t}" for t, ok in section.get("targets", {}).items() if not ok]
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"written to {RESULTS}")
    _docs(results)
    for line in failed:
        print(f"TARGET MISSED  {line}")
    return 0


def _docs(results: dict) -> int:
    for page in docs.write(results):
        print(f"rewrote the figure tables of {page.relative_to(docs.DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
