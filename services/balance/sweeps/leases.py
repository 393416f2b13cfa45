"""Chunk leases: how the reconciler tells a chunk whose worker is gone from a slow one.

While a worker plays a chunk, a daemon thread renews the chunk's lease in Redis every
third of `LEASE_SECONDS`. A thread, not a check between games, so that one slow game (an
ISMCTS bot with many iterations) cannot let the lease lapse. If the worker process dies
(SIGKILL, OOM, its main process killed, the pod evicted) the renewals stop and the lease
runs out; `reconcile.py` then queues the chunk again. If Redis is away for a while the
thread keeps trying; the lease may lapse meanwhile, which can only cost a duplicate run of
the chunk, never a double count (results are stored once per chunk id, store.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from types import TracebackType

import redis

from .store import SweepStore

log = logging.getLogger(__name__)

# How long a lease lasts without renewal. Short enough that a lost chunk is noticed within
# a minute or two; long enough that a loaded machine's stall does not look like a death.
LEASE_SECONDS = float(os.environ.get("SWEEP_LEASE_SECONDS", "60"))


class Heartbeat:
    """`with Heartbeat(store, sweep_id, chunk_id):` holds the chunk's lease while the block runs."""

    def __init__(self, store: SweepStore, sweep_id: str, chunk_id: str, seconds: float = LEASE_SECONDS):
        self.store, self.sweep_id, self.chunk_id, self.seconds = store, sweep_id, chunk_id, seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"lease-{chunk_id}", daemon=True)

    def _renew(self) -> None:
        try:
            self.store.renew_lease(self.sweep_id, self.chunk_id, self.seconds)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("lease of %s/%s not renewed: %s", self.sweep_id, self.chunk_id, exc)

    def _beat(self) -> None:
        while not self._stop.wait(self.seconds / 3):
            self._renew()

    def __enter__(self) -> Heartbeat:
        self._renew()
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        # Stored: the store script already dropped the lease. Failed or cancelled: drop it
        # so the reconciler does not wait for it to run out (a failed sweep is not active).
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):  # else it runs out
            self.store.drop_lease(self.sweep_id, self.chunk_id)


class AggregationHeartbeat(Heartbeat):
    """`with AggregationHeartbeat(store, sweep_id):` holds a sweep's aggregation claim while its
    finisher runs. A finisher killed mid-way (its worker SIGKILLed) stops renewing, the claim
    runs out within `LEASE_SECONDS`, and the reconciler sends the finish again; a fixed long
    claim would leave the sweep "running" with every chunk in until it expired."""

    def __init__(self, store: SweepStore, sweep_id: str, seconds: float = LEASE_SECONDS):
        super().__init__(store, sweep_id, "aggregation", seconds)

    def _renew(self) -> None:
        try:
            self.store.renew_aggregation(self.sweep_id, self.seconds)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            log.warning("aggregation claim of %s not renewed: %s", self.sweep_id, exc)

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=5)  # the finisher releases the claim itself
