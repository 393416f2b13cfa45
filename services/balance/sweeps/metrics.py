"""Prometheus metrics of the sweep workers, and the one HTTP endpoint that serves them.

A Celery worker runs several pool processes; each has its own counters. We use
prometheus-client's multiprocess mode: every process writes its values to files in
`PROMETHEUS_MULTIPROC_DIR`, and the worker's main process serves their sum on
`WORKER_METRICS_PORT` (started when the worker is ready, see `tasks.py`). Both variables
must be set in the worker's environment before it starts (the directory empty and
writable); without `PROMETHEUS_MULTIPROC_DIR` the endpoint only sees the main process,
which simulates nothing. Gauges use the `mostrecent` mode, so a value set by any process
(progress after a chunk, balance gauges after a nightly) is what is exported.

Names follow Prometheus conventions (architecture decision 9). The balance gauges carry a
`cell` label with the cell's words; a sweep has tens of cells, not thousands.

Gauges about sweeps and nightly balance are not kept in the processes at all: the
`SweepCollector` reads them from Redis at each scrape (the active sweeps' progress, the
latest nightly's balance figures per game). So a finished sweep's progress series and a
metric that no longer drifts simply leave /metrics, whichever process set them and
however often workers restart — multiprocess gauges could never be removed.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import orjson
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily

if TYPE_CHECKING:
    from .store import SweepStore

log = logging.getLogger(__name__)

GAMES = Counter("cultists_sweep_games_simulated_total", "Bot games simulated by sweep chunks", ["game"])
CHUNKS = Counter(
    "cultists_sweep_chunks_total",
    "Sweep chunks by outcome: done, duplicate (a redelivered chunk already stored), failed, cancelled, "
    "yielded (stopped for waiting nightly chunks, queued again)",
    ["game", "outcome"],
)
CHUNK_SECONDS = Histogram(
    "cultists_sweep_chunk_duration_seconds",
    "Wall time of one chunk's simulation",
    ["game"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)
REQUEUED = Counter(
    "cultists_sweep_chunks_requeued_total",
    "Chunks queued again by the reconciler: their lease ran out or their message was lost",
)
YIELDED = Counter(
    "cultists_sweep_chunks_yielded_total",
    "Ad hoc chunks stopped part-way and queued again because nightly chunks were waiting",
)
SWEEP_SECONDS = Histogram(
    "cultists_sweep_duration_seconds",
    "Wall time of whole sweeps, submit to aggregated",
    ["game"],
    buckets=(10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400),
)
# Balance figures of each game's latest nightly and its drift, kept in Redis (see
# SweepCollector): a night replaces the game's previous figures entirely, so a cell or a
# metric that is gone (or stopped drifting) leaves /metrics.
BALANCE_KEY = "cultists:nightly:{game}:gauges"
DRIFT_KEY = "cultists:nightly:{game}:drift-gauges"


def balance_gauges(summary: dict) -> dict:
    """The balance gauge values of one nightly summary, as plain data."""
    cells = summary["aggregates"]["cells"]
    return {
        "flagged": sum(1 for c in cells if c["flagged"]),
        "first_seat": {c["label"]: c["first_seat_advantage"]["advantage"] for c in cells},
    }


def drift_gauges(drift: dict) -> dict:
    """The drift gauge values of one game's part of a night's comparison (drift.py)."""
    return {
        "drift": len(drift["drifted"]),
        "drift_delta": [[d["cell"], d["metric"], d["difference"]] for d in drift["drifted"]],
    }


def export_balance(game: str, summary: dict, store) -> None:
    """Publish the balance gauges of a nightly sweep (read back by SweepCollector)."""
    store.r.set(BALANCE_KEY.format(game=game), orjson.dumps(balance_gauges(summary)))


def export_drift(game: str, drift: dict, store) -> None:
    """Publish the drift gauges of one game's part of a judged night."""
    store.r.set(DRIFT_KEY.format(game=game), orjson.dumps(drift_gauges(drift)))


class SweepCollector:
    """Sweep and balance gauges read from Redis at scrape time (see the module docstring)."""

    def __init__(self, redis_url: str, cluster: bool = False) -> None:
        self.redis_url = redis_url
        self.cluster = cluster
        self._store: SweepStore | None = None

    def _client(self):
        if self._store is None:
            from .store import SweepStore

            self._store = SweepStore.from_url(self.redis_url, self.cluster)
        return self._store

    def describe(self):
        return []  # no fixed set of series: never collected at registration

    def collect(self):
        import redis

        progress = GaugeMetricFamily(
            "cultists_sweep_progress_ratio",
            "Share of an active sweep's games simulated so far (0..1); finished sweeps are not listed",
            labels=["sweep", "game", "kind"],
        )
        moved = GaugeMetricFamily(
            "cultists_sweep_last_progress_timestamp_seconds",
            "When an active sweep last stored a chunk (its start, before the first); alert on its age",
            labels=["sweep", "game", "kind", "status"],
        )
        flagged = GaugeMetricFamily(
            "cultists_balance_flagged_cells",
            "Cells of the latest nightly sweep flagged by Benjamini-Hochberg",
            labels=["game"],
        )
        first = GaugeMetricFamily(
            "cultists_balance_first_seat_advantage",
            "Seat 0 win rate minus the fair share, per cell of the latest nightly sweep",
            labels=["game", "cell"],
        )
        drift = GaugeMetricFamily(
            "cultists_balance_drift",
            "Metrics of the latest nightly sweep that drifted from the previous night (alert when > 0)",
            labels=["game"],
        )
        delta = GaugeMetricFamily(
            "cultists_balance_drift_delta",
            "Tonight minus last night for each metric of the latest nightly that drifted",
            labels=["game", "cell", "metric"],
        )
        try:
            store = self._client()
            for sweep_id in store.active_ids():
                meta = store.meta(sweep_id)
                if not meta or "spec" not in meta:
                    continue
                game = orjson.loads(meta["spec"]).get("game", "?")
                kind = meta.get("kind", "adhoc")
                total = max(1, int(meta["total_games"]))
                progress.add_metric([sweep_id, game, kind], int(meta["games_done"]) / total)
                last = max(float(meta.get(f, 0.0)) for f in ("created", "started", "progressed"))
                moved.add_metric([sweep_id, game, kind, meta["status"]], last)
            for raw in store.r.scan_iter(BALANCE_KEY.format(game="*"), count=100):
                body = store.r.get(raw)
                if body is None:
                    continue
                game, values = raw.decode().split(":")[2], orjson.loads(body)
                flagged.add_metric([game], values["flagged"])
                for cell, adv in values["first_seat"].items():
                    first.add_metric([game, cell], adv)
            for raw in store.r.scan_iter(DRIFT_KEY.format(game="*"), count=100):
                body = store.r.get(raw)
                if body is None:
                    continue
                game, values = raw.decode().split(":")[2], orjson.loads(body)
                drift.add_metric([game], values["drift"])
                for cell, metric, value in values["drift_delta"]:
                    delta.add_metric([game, cell, metric], value)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("sweep gauges not collected, Redis unreachable: %s", exc)
        yield from (progress, moved, flagged, first, drift, delta)


def registry(redis_url: str | None = None, cluster: bool = False) -> CollectorRegistry:
    """The registry to serve: all pool processes' files in multiprocess mode (else this
    process's metrics), plus the sweep gauges read from Redis at `redis_url` (a Redis
    Cluster with `cluster`)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        reg = CollectorRegistry()
        multiprocess.MultiProcessCollector(reg)
    else:
        log.warning("PROMETHEUS_MULTIPROC_DIR is unset: /metrics shows only the worker's main process")
        reg = REGISTRY
    if redis_url:
        reg.register(SweepCollector(redis_url, cluster))
    return reg


def prime() -> None:
    """Create every game's work series at zero in this process. In multiprocess mode a
    series exists only once some process touched it, so a fresh worker served none of
    them until its first chunk; zeros let dashboards and alerts see the worker at once."""
    from services.engines.registry import available_games

    for game in available_games():
        GAMES.labels(game)
        CHUNK_SECONDS.labels(game)
        for outcome in ("done", "duplicate", "failed", "cancelled"):
            CHUNKS.labels(game, outcome)


def serve(port: int, addr: str = "0.0.0.0", redis_url: str | None = None, cluster: bool = False) -> bool:
    """Start the /metrics endpoint in a thread; False (and a log line) if the port is taken.
    A sweeps worker (the one given `redis_url`) shows its work series from the start."""
    if redis_url:
        prime()
    reg = registry(redis_url, cluster)
    try:
        start_http_server(port, addr, registry=reg)
    except OSError as exc:
        log.warning("worker metrics not served on port %s: %s", port, exc)
        return False
    log.info("worker metrics on http://%s:%s/metrics", addr, port)
    return True


def process_exited(pid: int) -> None:
    """Drop a dead pool process's live gauges (counters stay: they are totals)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
