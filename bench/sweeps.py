"""Balance sweep throughput: Celery with 2 worker processes against a local pool of 2.

Both run the very same plan (same spec, same chunks) in the same bench run, so machine
noise hits both alike; the target is a ratio (Celery >= 0.9x local). Wall time runs from
submit to aggregated summary on both sides, so queueing, Redis round trips, result storage
and aggregation are all inside the Celery figure.

Each path runs three times, alternating, and keeps its best. Beside the ratio the bench
reports each path's share of wall time spent inside chunk simulation ("time simulating"):
load from other programs slows the games on both paths alike, so that share shows a
path's own overhead (queueing, storage, aggregation) even when the ratio is noisy.

Then a 100,000-game Crazy Cultists sweep runs on whichever path was faster, and its wall
time is reported as measured, with the load average at the end.

Redis: REDIS_URL if set (a database the bench may write sweep keys to), else an embedded
redis-server. The Celery worker is started here and stopped at the end.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.load import load_average

ROOT = Path(__file__).resolve().parents[1]
PROCESSES = 2
TARGET_RATIO = 0.9
COMPARE_GAMES = 8_000
BIG_GAMES = 100_000
CHUNK = 250
REPEATS = 3


def _spec(games: int, seed: int) -> dict[str, Any]:
    return {
        "name": f"bench {games}",
        "game": "crazy_cultists",
        "seed": seed,
        "games": games,
        "players": [4],
        "lineups": ["random"],
        "chunk": CHUNK,
    }


def _start_worker(redis_url: str, log_dir: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
    log = open(Path(log_dir) / "worker.log", "wb")  # noqa: SIM115 - lives as long as the worker
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", "sweeps", "-c", str(PROCESSES),
         "-n", f"bench-{os.getpid()}@%h", "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


def _celery_run(store, app, spec_dict: dict[str, Any], timeout: float = 3600) -> tuple[float, float]:
    """(seconds from submit to the stored summary, seconds spent inside chunk simulation)."""
    from services.balance.sweeps import control
    from services.balance.sweeps.spec import parse_spec

    spec = parse_spec(spec_dict)
    start = time.perf_counter()
    sweep_id = control.submit(spec, store, app)
    deadline = start + timeout
    while True:
        status = store.status(sweep_id)
        if status == "done":
            break
        if status in ("failed", "cancelled") or time.perf_counter() > deadline:
            raise RuntimeError(f"bench sweep {sweep_id} ended {status}: {store.meta(sweep_id).get('error')}")
        time.sleep(0.02)
    elapsed = time.perf_counter() - start
    summary = store.summary(sweep_id)
    if summary["aggregates"]["games_counted"] != spec.total_games:
        raise RuntimeError(
            f"celery counted {summary['aggregates']['games_counted']} of {spec.total_games} games"
        )
    return elapsed, summary["run"]["cpu_seconds_simulating"]


def _local_run(spec_dict: dict[str, Any]) -> tuple[float, float]:
    from services.balance.sweeps.local import run_local
    from services.balance.sweeps.spec import parse_spec

    spec = parse_spec(spec_dict)
    start = time.perf_counter()
    summary, _replays, _results = run_local(spec, PROCESSES)
    elapsed = time.perf_counter() - start
    if summary["aggregates"]["games_counted"] != spec.total_games:
        raise RuntimeError("local run lost games")
    return elapsed, summary["run"]["cpu_seconds_simulating"]


def _efficiency(runs: list[tuple[float, float]]) -> float:
    """Share of the processes' wall time spent simulating, over all runs (1.0 = no overhead).

    Load from other programs slows the games themselves, inside and outside chunks alike,
    so this ratio shows each path's own overhead even on a busy machine.
    """
    return sum(sim for _w, sim in runs) / (PROCESSES * sum(w for w, _s in runs))


def run() -> dict[str, Any]:
    from services.balance.sweeps.store import SweepStore
    from services.runtime.embedded_redis import start_redis
    from workers.app import app

    embedded = None
    url = os.environ.get("REDIS_URL")
    if not url:
        embedded = start_redis()
        url = embedded.url
    app.conf.update(broker_url=url, result_backend=url)
    store = SweepStore.from_url(url)
    log_dir = tempfile.mkdtemp(prefix="cultists-bench-sweeps-")
    worker = _start_worker(url, log_dir)
    try:
        # Warm up both paths: worker processes and the local fork server import the engines.
        _celery_run(store, app, _spec(2 * CHUNK, 1), timeout=120)
        _local_run(_spec(2 * CHUNK, 1))

        # Alternate the two paths and keep each one's best, so a burst of load from
        # something else on the machine does not decide the ratio.
        celery_runs, local_runs = [], []
        for rep in range(REPEATS):
            celery_runs.append(_celery_run(store, app, _spec(COMPARE_GAMES, 10 + rep)))
            local_runs.append(_local_run(_spec(COMPARE_GAMES, 10 + rep)))
        celery_gps = COMPARE_GAMES / min(w for w, _s in celery_runs)
        local_gps = COMPARE_GAMES / min(w for w, _s in local_runs)
        ratio = celery_gps / local_gps
        celery_eff, local_eff = _efficiency(celery_runs), _efficiency(local_runs)
        print(
            f"  celery ({PROCESSES} processes): {celery_gps:,.0f} games/s  runs {[round(w, 2) for w, _s in celery_runs]}"
        )
        print(
            f"  local pool ({PROCESSES}):      {local_gps:,.0f} games/s  runs {[round(w, 2) for w, _s in local_runs]}"
        )
        print(
            f"  ratio {ratio:.3f} (target >= {TARGET_RATIO}); time simulating: celery {celery_eff:.1%}, local {local_eff:.1%}"
        )

        path = "celery" if celery_gps >= local_gps else "local"
        big = _spec(BIG_GAMES, 1000)
        big_seconds = (_celery_run(store, app, big) if path == "celery" else _local_run(big))[0]
        print(
            f"  100,000 Crazy Cultists games via {path}: {big_seconds:.1f} s ({BIG_GAMES / big_seconds:,.0f} games/s)"
        )
        load = load_average()[0]
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, 15)
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, 9)
                worker.wait()
        store.r.close()
        if embedded is not None:
            embedded.stop()
    return {
        "compare": {
            "game": "crazy_cultists",
            "players": 4,
            "bots": "random",
            "games": COMPARE_GAMES,
            "chunk": CHUNK,
            "processes": PROCESSES,
            "celery_games_per_second": round(celery_gps, 1),
            "local_games_per_second": round(local_gps, 1),
            "celery_seconds": [round(w, 3) for w, _s in celery_runs],
            "local_seconds": [round(w, 3) for w, _s in local_runs],
            "ratio": round(ratio, 3),
            "celery_time_simulating": round(celery_eff, 3),
            "local_time_simulating": round(local_eff, 3),
        },
        "sweep_100k": {
            "game": "crazy_cultists",
            "games": BIG_GAMES,
            "path": path,
            "processes": PROCESSES,
            "wall_seconds": round(big_seconds, 1),
            "games_per_second": round(BIG_GAMES / big_seconds, 1),
        },
        "load_average_at_end": round(load, 2),
        "targets": {f"celery games/s >= {TARGET_RATIO}x local pool of {PROCESSES}": ratio >= TARGET_RATIO},
    }
