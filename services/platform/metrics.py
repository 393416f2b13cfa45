"""Live-play metrics (architecture decision 9): engine calls, and the platform's facts.

Per-process facts (engine-call latency and errors) are prometheus-client metrics; under
gunicorn they live in PROMETHEUS_MULTIPROC_DIR and /metrics merges every worker's files.
Facts about the whole platform (open tables, queued tickets, time to match) are read from
Redis at scrape time instead, because no single process owns them: a table opened by one
gateway worker and matched by a Celery worker is still one table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import redis
from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from services.runtime.broker import queue_keys

from .keys import QUEUES, TIME_TO_MATCH_KEY, queue_key
from .store import TableStore


class FastHistogram(Histogram):
    """A Histogram whose `labels(...)` is one dict lookup once a label set has been seen.

    prometheus-client converts and checks the values and takes a lock on every `labels`
    call; the gateway makes four such calls per move (two requests, two engine calls), on
    the hot path of every request, always with the same few label sets.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._children: dict[tuple[object, ...], FastHistogram] = {}

    def labels(self, *labelvalues: object, **labelkwargs: object) -> FastHistogram:
        if labelkwargs:
            return super().labels(*labelvalues, **labelkwargs)
        child = self._children.get(labelvalues)
        if child is None:
            child = self._children[labelvalues] = super().labels(*labelvalues)
        return child


ENGINE_CALL_SECONDS = FastHistogram(
    "cultists_gateway_engine_call_duration_seconds",
    "Time of one gRPC call from the gateway to an engine, by game and method.",
    ["game", "method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
)
ENGINE_ERRORS = Counter(
    "cultists_gateway_engine_errors_total",
    "Engine calls that ended in an error status, by game, method and gRPC code.",
    ["game", "method", "code"],
)

# Event streams this process holds open, and those refused past its cap (stream_hub.py).
STREAMS_OPEN = Gauge(
    "cultists_gateway_streams_open",
    "Server-sent event streams open, summed over the live gateway processes.",
    multiprocess_mode="livesum",
)
STREAMS_REFUSED = Counter(
    "cultists_gateway_streams_refused_total",
    "Event streams answered 503 because their process already served its cap.",
)

# Time to match is observed by whichever process forms the table, so it is kept in Redis
# as cumulative bucket counters (the Prometheus histogram shape) and read back on scrape.
TIME_TO_MATCH_BUCKETS = (1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0)


def observe_time_to_match(pipe: redis.client.Pipeline, seconds: float) -> None:
    """Queue the counter updates on a pipeline, so they count once with the match."""
    for bound in TIME_TO_MATCH_BUCKETS:
        if seconds <= bound:
            pipe.hincrby(TIME_TO_MATCH_KEY, f"le:{bound}", 1)
    pipe.hincrby(TIME_TO_MATCH_KEY, "count", 1)
    pipe.hincrbyfloat(TIME_TO_MATCH_KEY, "sum", seconds)


CELERY_QUEUES = ("tables", "bots", "sweeps")  # workers/app.py routes every task to one of these


class PlatformFacts(Collector):
    """Gauges and the time-to-match histogram, read from Redis on every scrape (the broker is
    the same Redis, so the Celery queue depths are read here too)."""

    def __init__(self, store: TableStore) -> None:
        self.store = store
        self.redis = store.redis

    def collect(self) -> Iterator[Metric]:
        tables = GaugeMetricFamily(
            "cultists_gateway_open_tables", "Tables not yet finished, by status.", labels=["status"]
        )
        tables.add_metric(["waiting"], self.store.count("waiting"))
        tables.add_metric(["playing"], self.store.count("playing"))
        yield tables
        queued = GaugeMetricFamily(
            "cultists_gateway_queued_tickets",
            "Matchmaking tickets waiting, by game and table size.",
            labels=["game", "players"],
        )
        for member in sorted(self.redis.smembers(QUEUES)):
            game, _, players = member.decode().partition(":")
            queued.add_metric([game, players], self.redis.zcard(queue_key(game, int(players))))
        yield queued
        depth = GaugeMetricFamily(
            "cultists_celery_queue_length",
            "Tasks waiting in a Celery queue (live-table moves, sweep chunks), read from the broker.",
            labels=["queue"],
        )
        for queue in CELERY_QUEUES:
            depth.add_metric([queue], sum(self.redis.llen(k) for k in queue_keys(queue)))
        yield depth
        raw = {k.decode(): v.decode() for k, v in self.redis.hgetall(TIME_TO_MATCH_KEY).items()}
        count = int(raw.get("count", 0))
        buckets = [(str(b), int(raw.get(f"le:{b}", 0))) for b in TIME_TO_MATCH_BUCKETS]
        buckets.append(("+Inf", count))
        yield HistogramMetricFamily(
            "cultists_gateway_time_to_match_seconds",
            "Time from a ticket entering the queue to its table being formed.",
            buckets=buckets,
            sum_value=float(raw.get("sum", 0.0)),
        )
