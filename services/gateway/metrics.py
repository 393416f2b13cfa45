"""Gateway metrics (architecture decision 9): HTTP requests and refused writes, and the
/metrics body, which adds the platform's own (services/platform/metrics.py).
"""

from __future__ import annotations

import os

from prometheus_client import REGISTRY, CollectorRegistry, Counter, generate_latest, multiprocess

from services.platform.metrics import FastHistogram, PlatformFacts
from services.platform.store import TableStore

REQUEST_SECONDS = FastHistogram(
    "cultists_gateway_request_duration_seconds",
    "Time to answer one HTTP request, by route template, method and status.",
    ["route", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)
WRITES_REFUSED = Counter(
    "cultists_gateway_writes_refused_total",
    "Writes refused by a rate limit (429), by scope (address or player) and by who decided: "
    "redis (the shared count) or box (this worker, already refused in the same window).",
    ["scope", "by"],
)


def exposition(store: TableStore) -> bytes:
    """The /metrics body: this process (or every gunicorn worker) plus the Redis facts."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    facts = CollectorRegistry(auto_describe=False)
    facts.register(PlatformFacts(store))
    return generate_latest(registry) + generate_latest(facts)
