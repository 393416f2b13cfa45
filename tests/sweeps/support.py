"""Helpers shared by the sweep tests: small specs per game and waiting for a sweep."""

from __future__ import annotations

import time
import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from services.balance.sweeps.store import SweepStore

# Small but real sweeps: grids, several player counts and mixed line-ups where the game has them.
SMALL_SPECS: dict[str, dict[str, Any]] = {
    "crazy_cultists": {
        "game": "crazy_cultists",
        "seed": 100,
        "games": 24,
        "chunk": 12,
        "players": [3, 4],
        "grid": {"variant": ["base", "fiendish"]},
        "lineups": ["random", {"hero": "heuristic", "field": "random"}],
    },
    "trash_cult": {
        "game": "trash_cult",
        "seed": 7,
        "games": 16,
        "chunk": 8,
        "players": [2, 4],
        "max_turns": 60,
        "lineups": ["random"],
    },
    "tricky_cultists": {
        "game": "tricky_cultists",
        "seed": 42,
        "games": 40,
        "chunk": 20,
        "lineups": ["random", ["heuristic", "random", "random", "random"]],
    },
}


def wait_for(
    store: SweepStore, sweep_id: str, timeout: float = 90.0, until=("done", "cancelled", "failed")
) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = store.status(sweep_id)
        if status in until:
            return status
        time.sleep(0.1)
    raise TimeoutError(
        f"sweep {sweep_id} still {store.status(sweep_id)} after {timeout}s: {store.meta(sweep_id)}"
    )


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of the worker's /metrics as {(name, sorted labels): value}."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[sample.name, tuple(sorted(sample.labels.items()))] = sample.value
    return out
