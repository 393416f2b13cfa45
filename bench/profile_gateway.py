"""Where a gateway worker's CPU goes under the bench's load: py-spy samples every gunicorn
worker while the bench's clients play 200 tables at half the target rate (the phase the
p99 target is set at), then the functions with the most samples are printed, by own time
(the frame on top of the stack) and by inclusive time (anywhere on the stack).

`python -m bench.profile_gateway [SECONDS]` profiles the gateway, then the floor
(bench/floor.py: what of a worker's CPU is Flask, gunicorn, gevent, gRPC and redis-py
alone) on the same stack, keeps both in bench/results.json (`gateway_profile`) and makes
the docs' profile table from them. Not a `make bench` section: py-spy's sampling
takes CPU from the two cores the figures are measured on, so a profile run's latencies are
not the bench's. Needs `py-spy` (a dev dependency) and the right to trace child processes.
"""

from __future__ import annotations

import datetime
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import services.engines
from services.engines.registry import available_games
from services.runtime.embedded_redis import start_redis

from . import docs
from .gateway import (
    FLOOR_APP,
    GATEWAY_APP,
    ROOT,
    TABLES,
    TARGET_MOVES_PER_SECOND,
    WARMUP_SECONDS,
    CpuMeter,
    _gunicorn,
    _phase,
    _start_engines,
    _stop,
)
from .load import load_average
from .run import RESULTS

TOP = 25
_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:]+):\d+\)$")


def _frame_name(frame: str) -> str:
    """`func (path/to/module.py:123)` -> `package/module.py:func`: lines of one function
    summed; the project's files named from the repository root (`services/...`, `bench/...`)."""
    found = _FRAME.match(frame)
    if found is None:
        return frame
    path = found["file"]
    if path.startswith(f"{ROOT}/"):
        path = path[len(str(ROOT)) + 1 :]
    for marker in ("site-packages/", "/lib/python3"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{path}:{found['func']}"


def summarize(raw: str, top: int = TOP) -> dict[str, list[tuple[str, float]]]:
    """py-spy's raw (collapsed-stack) output -> the top functions by own and by inclusive
    share of the samples, in percent."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_frame_name(f) for f in stack.split(";")]
        frames = [f for f in frames if not f.startswith("process ")]  # --subprocesses' root
        if not frames:
            continue
        total += n
        own[frames[-1]] += n
        for name in set(frames):
            inclusive[name] += n
    return (
        {
            kind: [(name, round(100 * n / max(total, 1), 1)) for name, n in counts.most_common(top)]
            for kind, counts in (("own", own), ("inclusive", inclusive))
        }
        | {
            # The project's own functions (the gateway's, the floor's): where its own work goes,
            # under the framework frames that top the inclusive list.
            "ours": [
                (name, round(100 * n / max(total, 1), 1))
                for name, n in inclusive.most_common()
                if name.startswith(("services/", "bench/"))
            ][:top]
        }
        | {"samples": [("", float(total))]}
    )


def main(argv: list[str]) -> int:
    seconds = float(argv[0]) if argv else 20.0
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("py-spy is not installed (pip install py-spy)", file=sys.stderr)
        return 2
    games = available_games()
    redis = start_redis()
    logs = Path(tempfile.mkdtemp(prefix="cultists-profile-gateway-"))
    procs: list[subprocess.Popen] = []
    found: dict[str, Any] = {"seconds": seconds}
    try:
        env = {"REDIS_URL": redis.url, "PROMETHEUS_MULTIPROC_DIR": str(logs / "metrics")}
        env.update(
            GATEWAY_RATE_LIMIT_ADDRESS="",
            GATEWAY_RATE_LIMIT_PLAYER="",
            GATEWAY_RATE_LIMIT_GUEST="",
            GATEWAY_MAX_WAITING_TABLES="0",
        )
        env.update(_start_engines(games, logs, procs))
        for name, app in (("gateway", GATEWAY_APP), ("floor", FLOOR_APP)):
            out = logs / f"{name}.raw"
            server, port = _gunicorn(app, env, logs / f"{name}.log")
            try:
                # Attached to the master, following its workers, over the measured window
                # only: from the end of the warm-up (the workers' imports are done by then).
                record = [spy, "record", "--pid", str(server.pid), "--subprocesses", "--nonblocking"]
                record += ["-r", "200", "-d", str(int(seconds)), "-f", "raw", "-o", str(out)]
                spying: list[subprocess.Popen] = []
                start = threading.Timer(
                    WARMUP_SECONDS,
                    lambda r=record, started=spying: started.append(
                        subprocess.Popen(r, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    ),
                )
                start.start()
                print(f"  {name} ({app}) under py-spy:")
                interval = 2 * TABLES / TARGET_MOVES_PER_SECOND
                _phase(port, games, TABLES, seconds, interval, CpuMeter({name: server.pid}))
                start.join()
                spying[0].wait(timeout=60)
            finally:
                _stop(server)
            found[name] = summarize(out.read_text())
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    for name in ("gateway", "floor"):
        print(f"\n{name}: {int(found[name]['samples'][0][1])} samples of its workers")
        for kind in ("own", "inclusive"):
            print(f"  by {kind} time:")
            for function, share in found[name][kind]:
                print(f"    {share:5.1f}%  {function}")
    found["measured_at"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    found["load_average_at_end"] = load_average()
    found["engines_compiled"] = services.engines.compiled()
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results["gateway_profile"] = found
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    for page in docs.write(results):
        print(f"rewrote the figure tables of {page.relative_to(docs.DOCS.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
