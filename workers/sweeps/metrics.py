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
"""

from __future__ import annotations

import logging
import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

log = logging.getLogger(__name__)

GAMES = Counter("cultists_sweep_games_simulated_total", "Bot games simulated by sweep chunks", ["game"])
CHUNKS = Counter(
    "cultists_sweep_chunks_total",
    "Sweep chunks by outcome: done, duplicate (a redelivered chunk already stored), failed, cancelled",
    ["game", "outcome"],
)
CHUNK_SECONDS = Histogram(
    "cultists_sweep_chunk_duration_seconds",
    "Wall time of one chunk's simulation",
    ["game"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300),
)
PROGRESS = Gauge(
    "cultists_sweep_progress_ratio",
    "Share of a sweep's games simulated so far (0..1)",
    ["sweep", "game"],
    multiprocess_mode="mostrecent",
)
SWEEP_SECONDS = Histogram(
    "cultists_sweep_duration_seconds",
    "Wall time of whole sweeps, submit to aggregated",
    ["game"],
    buckets=(10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400),
)
FLAGGED = Gauge(
    "cultists_balance_flagged_cells",
    "Cells of the latest nightly sweep flagged by Benjamini-Hochberg",
    ["game"],
    multiprocess_mode="mostrecent",
)
FIRST_SEAT = Gauge(
    "cultists_balance_first_seat_advantage",
    "Seat 0 win rate minus the fair share, per cell of the latest nightly sweep",
    ["game", "cell"],
    multiprocess_mode="mostrecent",
)
DRIFT = Gauge(
    "cultists_balance_drift",
    "Metrics of the latest nightly sweep outside the previous night's 95% interval (alert when > 0)",
    ["game"],
    multiprocess_mode="mostrecent",
)
DRIFT_DELTA = Gauge(
    "cultists_balance_drift_delta",
    "Tonight minus last night for each metric that drifted beyond its interval",
    ["game", "cell", "metric"],
    multiprocess_mode="mostrecent",
)


def export_balance(game: str, summary: dict, drift: dict | None) -> None:
    """Set the balance gauges from a nightly summary and its comparison with the night before."""
    aggregates = summary["aggregates"]
    FLAGGED.labels(game).set(sum(1 for c in aggregates["cells"] if c["flagged"]))
    for cell in aggregates["cells"]:
        FIRST_SEAT.labels(game, cell["label"]).set(cell["first_seat_advantage"]["advantage"])
    if drift is not None:
        DRIFT.labels(game).set(len(drift["drifted"]))
        for item in drift["drifted"]:
            DRIFT_DELTA.labels(game, item["cell"], item["metric"]).set(item["delta"])


def registry() -> CollectorRegistry | None:
    """The registry to serve: all pool processes' files in multiprocess mode, else the default."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return None
    from prometheus_client import multiprocess

    reg = CollectorRegistry()
    multiprocess.MultiProcessCollector(reg)
    return reg


def prime() -> None:
    """Create every game's work series at zero in this process. In multiprocess mode a
    series exists only once some process touched it, so a fresh worker served an empty
    page until its first chunk; zeros let dashboards and alerts see the worker at once."""
    from services.engines.registry import available_games

    for game in available_games():
        GAMES.labels(game)
        CHUNK_SECONDS.labels(game)
        for outcome in ("done", "duplicate", "failed", "cancelled"):
            CHUNKS.labels(game, outcome)


def serve(port: int, addr: str = "0.0.0.0") -> bool:
    """Start the /metrics endpoint in a thread; False (and a log line) if the port is taken."""
    prime()
    reg = registry()
    try:
        if reg is None:
            log.warning("PROMETHEUS_MULTIPROC_DIR is unset: /metrics shows only the worker's main process")
            start_http_server(port, addr)
        else:
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
