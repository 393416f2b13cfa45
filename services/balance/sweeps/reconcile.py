"""The reconciler: finds the chunks of active sweeps that nobody will ever play, and queues them again.

Celery's late acks and the broker's visibility timeout bring back the message of a worker
that died, but only after the timeout (an hour), and not at all when the message itself is
gone (Redis restarted and lost its last writes, a broker blip between pop and ack). So beat
runs `tasks.reconcile` every `SWEEP_RECONCILE_SECONDS` (30), which walks the active sweeps:

- every chunk in and no summary: the finish task is queued again (its message was lost);
- a missing chunk whose lease ran out (leases.py): its worker is gone: queued again;
- a missing chunk with no lease: either waiting in the queue or lost. It is queued again
  only when the sweeps queue is empty (nothing can be waiting) and the sweep has not
  moved for `LEASE_SECONDS` (no worker is about to start it). A planner that queues a
  batch counts as a move; one whose message was lost leaves chunks no one queued, and they
  are found by this same rule.

Queueing a chunk twice is always safe: results are stored once per chunk id (store.py), and
a duplicate message finds its chunk stored and returns without playing. So the rules above
err towards requeueing; the only cost is a message.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from services.runtime.broker import queue_keys

from . import control
from .leases import LEASE_SECONDS
from .plan import Chunk, chunks
from .spec import parse_stored_spec
from .store import ACTIVE, SweepStore, key

log = logging.getLogger(__name__)


_plans: dict[str, list[Chunk]] = {}


def _plan(store: SweepStore, sweep_id: str) -> list[Chunk]:
    """The sweep's chunks, parsed once per process (a spec's validation builds every cell)."""
    if sweep_id not in _plans:
        if len(_plans) > 64:
            _plans.clear()
        _plans[sweep_id] = chunks(parse_stored_spec(store.spec(sweep_id)))
    return _plans[sweep_id]


def waiting_messages(client: Any, queue: str = control.QUEUE) -> int:
    """Messages waiting in `queue` over all its priority lists (services/runtime/broker.py),
    read from the broker's Redis `client`."""
    pipe = client.pipeline()
    for name in queue_keys(queue):
        pipe.llen(name)
    return sum(pipe.execute())


def reconcile(
    store: SweepStore, celery_app: control.TaskSender, now: float | None = None, broker: Any = None
) -> dict[str, Any]:
    """One pass over the active sweeps; returns what was done, for the log and the tests.
    `broker`: a Redis client of Celery's broker, where it is not the store's Redis (the
    store on a Redis Cluster)."""
    now = time.time() if now is None else now
    queue_empty = waiting_messages(broker or store.r) == 0
    report: dict[str, Any] = {"requeued": {}, "finish": [], "forgotten": []}
    for sweep_id in store.active_ids():
        meta = store.meta(sweep_id)
        if not meta or meta["status"] not in ACTIVE:
            store.forget_active(sweep_id)  # expired, or finished by an older version
            report["forgotten"].append(sweep_id)
            continue
        if int(meta["chunks_done"]) >= int(meta["total_chunks"]):
            if store.summary(sweep_id) is None and not store.r.exists(key(sweep_id, "aggregating")):
                control.nudge(store, celery_app, sweep_id)
                report["finish"].append(sweep_id)
            continue
        lost = _lost_chunks(store, sweep_id, meta, now, queue_empty)
        if lost:
            control.requeue(store, celery_app, sweep_id, lost, meta.get("kind", "adhoc"), now)
            report["requeued"][sweep_id] = lost
            log.warning("sweep %s: %d lost chunk(s) queued again: %s", sweep_id, len(lost), lost[:10])
    return report


def _lost_chunks(
    store: SweepStore, sweep_id: str, meta: dict[str, str], now: float, queue_empty: bool
) -> list[str]:
    stored = store.chunk_ids(sweep_id)
    leases = store.leases(sweep_id)
    last_move = max(float(meta.get(f, 0.0)) for f in ("created", "progressed", "requeued_at", "planned_at"))
    idle = queue_empty and now - last_move > LEASE_SECONDS
    lost = []
    for chunk in _plan(store, sweep_id):
        if chunk.id in stored:
            continue
        until = leases.get(chunk.id)
        if (until is not None and until < now) or (until is None and idle):
            lost.append(chunk.id)
    return lost
