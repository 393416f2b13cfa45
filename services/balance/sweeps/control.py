"""Submitting, following, cancelling and finishing sweeps on Celery; shared by CLI, API and tasks.

A sweep's whole life is in Redis (`store.py`); a task message carries only
`(sweep id, chunk id)`. Clients (the CLI's progress bar, the gateway) read progress from
Redis, never from Celery's result backend, so a client can stop and come back — or a
different client can ask — and see the same sweep.

Chunk tasks are sent by name (`send_task`), so the gateway can queue a sweep without
importing the task code, and they go to the `sweeps` queue by the app's routes.

A sweep submitted over HTTP is planned by a worker, not in the request (`submit_to_plan`):
the gateway checks the spec's size from its numbers, records the sweep and queues one
`plan` task; the planner (`plan`) builds the chunk list and sends it a batch at a time,
noting after each batch how many are queued (`chunks_queued`, `planned_percent` in the
progress), so a large sweep answers 202 at once and the gateway's memory does not grow with
its chunks. A planner killed mid-way is delivered again and resumes from the count.

Priorities keep the nightly from waiting behind an ad hoc sweep: kombu's Redis transport
keeps one list per priority step and a worker always pops the most urgent non-empty one
(0 first). Control tasks (finish, reconcile, the nightly's start) go at 0, nightly chunks
at 3, ad hoc chunks at 6: a 10M-game ad hoc sweep queued first still lets tonight's suite
through, chunk by chunk, as soon as a worker process frees up.

Priority alone waits for a process to free up, and an ad hoc chunk of search bots can
hold one for hours. So a running ad hoc chunk also *yields*: where it asks whether it was
cancelled (between decisions, every STOP_POLL_SECONDS: simulate.py) it asks too whether
nightly chunks are waiting in the broker (`nightly_waiting`), and if so it stops, queues
itself again at its own priority (`yield_chunk`; the games it finished are kept and its
next run plays on from the first one left, so giving way loses at most the game under
way) and frees the process, which then pops the nightly's chunk. The nightly thus waits at
most a poll and one decision behind ad hoc work, not a chunk.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import orjson
import redis

from services.runtime.broker import priority_key

from . import metrics
from .leases import LEASE_SECONDS, AggregationHeartbeat
from .paired import PairCounts, count_blocks
from .partial import CellPartial, merge_all, of_chunk
from .plan import chunks
from .simulate import unpack
from .spec import SpecError, SweepSpec, parse_spec, parse_stored_spec
from .store import ACTIVE, SweepStore, key, new_id
from .summary import build_summary, run_info

log = logging.getLogger(__name__)

CHUNK_TASK = "workers.sweeps.tasks.run_chunk"
FINISH_TASK = "workers.sweeps.tasks.finish"
PLAN_TASK = "workers.sweeps.tasks.plan"
# Chunk messages a planner sends between two notes of its progress.
PLAN_BATCH = int(os.environ.get("SWEEP_PLAN_BATCH", "500"))
# Named explicitly so a light client app (the gateway's) without the worker's routes
# still queues where the workers listen.
QUEUE = "sweeps"
# Redis transport: lower is more urgent (see the module docstring).
PRIORITY = {"control": 0, "nightly": 3, "adhoc": 6}


class TaskSender(Protocol):
    """What a Celery app offers for queueing by name: the gateway's and the CLI's light
    client (services.runtime.task_client) or a worker's own app. Nothing here imports
    Celery or the task code."""

    def send_task(self, name: str, args: Any = None, **options: Any) -> Any: ...

    def producer_or_acquire(self, producer: Any = None) -> Any: ...


def chunk_priority(kind: str) -> int:
    return PRIORITY["nightly"] if kind == "nightly" else PRIORITY["adhoc"]


def nightly_waiting(broker: Any) -> bool:
    """Whether nightly chunks wait in the broker (Redis client `broker`) for a process."""
    return bool(broker.llen(priority_key(QUEUE, PRIORITY["nightly"])))


def yield_chunk(store: SweepStore, celery_app: TaskSender, sweep_id: str, chunk_id: str, kind: str) -> None:
    """Queue a chunk that stopped part-way for the nightly again, to play on from the
    games it kept (jobs.play_chunk); the sweep counts how often its chunks gave way (`chunks_yielded`)."""
    _send_chunks(celery_app, sweep_id, [chunk_id], kind, attempt=f"-y{time.time_ns()}")
    store.r.hincrby(key(sweep_id, "meta"), "chunks_yielded", 1)
    metrics.YIELDED.inc()


def _send_chunks(
    celery_app: TaskSender, sweep_id: str, chunk_ids: list[str], kind: str, attempt: str = ""
) -> None:
    with celery_app.producer_or_acquire() as producer:
        for chunk_id in chunk_ids:
            celery_app.send_task(
                CHUNK_TASK,
                args=[sweep_id, chunk_id],
                task_id=f"sweep-{sweep_id}-{chunk_id}{attempt}",
                producer=producer,
                queue=QUEUE,
                priority=chunk_priority(kind),
                ignore_result=True,
            )


def submit(
    spec: SweepSpec,
    store: SweepStore,
    celery_app: TaskSender,
    kind: str = "adhoc",
    extra: dict[str, str] | None = None,
) -> str:
    """Record the sweep, then queue one task per chunk; returns the sweep id.

    The record is written before the first message is sent, so a worker never meets a
    chunk of a sweep it cannot find.
    """
    plan = chunks(spec)
    sweep_id = new_id()
    store.create(
        sweep_id, spec.to_dict(), spec.total_games, len(plan), kind=kind,
        extra={**(extra or {}), "chunks_queued": str(len(plan))},
    )  # fmt: skip
    _send_chunks(celery_app, sweep_id, [c.id for c in plan], kind)
    log.info("sweep %s queued: %s games in %s chunks", sweep_id, spec.total_games, len(plan))
    return sweep_id


def chunk_count(spec: SweepSpec) -> int:
    """How many chunks `spec` plans, without listing them: cells times blocks of seeds."""
    return len(spec.cells()) * -(-spec.games // spec.chunk)


def submit_to_plan(
    spec: SweepSpec,
    store: SweepStore,
    celery_app: TaskSender,
    kind: str = "adhoc",
    extra: dict[str, str] | None = None,
) -> str:
    """Record the sweep and queue its planner (`plan`, on a worker); returns the sweep id.
    The work here does not grow with the sweep's games or chunks: what a request serving
    a submit may do."""
    sweep_id = new_id()
    store.create(
        sweep_id, spec.to_dict(), spec.total_games, chunk_count(spec), kind=kind,
        extra={**(extra or {}), "chunks_queued": "0"},
    )  # fmt: skip
    celery_app.send_task(
        PLAN_TASK, args=[sweep_id], task_id=f"sweep-{sweep_id}-plan", queue=QUEUE,
        priority=PRIORITY["control"], ignore_result=True,
    )  # fmt: skip
    log.info("sweep %s recorded: %s games, planned on a worker", sweep_id, spec.total_games)
    return sweep_id


def plan(store: SweepStore, celery_app: TaskSender, sweep_id: str, batch: int = PLAN_BATCH) -> str:
    """A worker's half of `submit_to_plan`: validate the spec completely (every cell
    dealt once, which the gateway does only for the first few), then queue its chunks a
    batch at a time from where an earlier attempt stopped, stopping if it is cancelled.
    Idempotent: a chunk queued twice is played once (store.py)."""
    meta = store.meta(sweep_id)
    if not meta or meta["status"] not in ACTIVE:
        return f"skipped ({meta.get('status') if meta else 'gone'})"
    try:
        spec = parse_spec(store.spec(sweep_id))
    except SpecError as exc:
        store.set_status(sweep_id, "failed", error=f"invalid spec: {exc}", finished=repr(time.time()))
        store.expire(sweep_id)
        return "invalid"
    ids = [c.id for c in chunks(spec)]
    queued = int(meta.get("chunks_queued", 0) or 0)
    kind = meta.get("kind", "adhoc")
    while queued < len(ids):
        if store.status(sweep_id) not in ACTIVE:
            return "cancelled"
        part = ids[queued : queued + batch]
        _send_chunks(celery_app, sweep_id, part, kind)
        queued += len(part)
        store.r.hset(
            key(sweep_id, "meta"), mapping={"chunks_queued": queued, "planned_at": repr(time.time())}
        )
    log.info("sweep %s planned: %s chunks queued", sweep_id, len(ids))
    return "planned"


def progress(store: SweepStore, sweep_id: str) -> dict[str, Any] | None:
    """Where a sweep stands, for progress bars and the API; None if there is no such sweep."""
    meta = store.meta(sweep_id)
    if not meta:
        return None
    total = int(meta["total_games"])
    done = int(meta["games_done"])
    total_chunks = int(meta["total_chunks"])
    # A sweep recorded before planners existed had every chunk queued at its submit.
    queued = int(meta.get("chunks_queued", total_chunks))
    started = float(meta["started"]) if "started" in meta else None
    finished = float(meta["finished"]) if "finished" in meta else None
    now = finished or time.time()
    elapsed = now - started if started else 0.0
    rate = done / elapsed if elapsed > 0 else 0.0
    left = (total - done) / rate if rate > 0 and done < total else (0.0 if done >= total else None)
    try:  # the designer's own words for it, where the list would otherwise show an id
        spec = orjson.loads(meta.get("spec") or "{}")
    except orjson.JSONDecodeError:
        spec = {}
    return {
        "id": sweep_id,
        "name": spec.get("name") if isinstance(spec, dict) else None,
        "game": spec.get("game") if isinstance(spec, dict) else None,
        "status": meta["status"],
        "kind": meta.get("kind", "adhoc"),
        "games_done": done,
        "total_games": total,
        "percent": round(100.0 * done / total, 2) if total else 100.0,
        "chunks_done": int(meta["chunks_done"]),
        "total_chunks": total_chunks,
        "chunks_queued": queued,
        "planned_percent": round(100.0 * queued / total_chunks, 2) if total_chunks else 100.0,
        "chunks_failed": len(store.failures(sweep_id)),
        "chunks_requeued": int(meta.get("chunks_requeued", 0)),
        "games_per_second": round(rate, 2),
        "seconds_left": round(left, 1) if left is not None else None,
        "elapsed_seconds": round(elapsed, 2),
        "error": meta.get("error"),
    }


def cancel(store: SweepStore, sweep_id: str) -> bool:
    """Stop a sweep: queued chunks are skipped, running ones stop at their next check."""
    return store.cancel(sweep_id)


def nudge(store: SweepStore, celery_app: TaskSender, sweep_id: str) -> None:
    """Queue the finish task again if every chunk is in but no summary exists.

    The chunk that completes a sweep queues the finish; if that worker died in between,
    any client asking for the result calls this, so a sweep never stays unfinished.
    """
    meta = store.meta(sweep_id)
    if (
        meta
        and meta["status"] in ACTIVE
        and int(meta["chunks_done"]) >= int(meta["total_chunks"])
        and store.summary(sweep_id) is None
    ):
        celery_app.send_task(
            FINISH_TASK, args=[sweep_id], queue=QUEUE, priority=PRIORITY["control"], ignore_result=True
        )


def requeue(
    store: SweepStore, celery_app: TaskSender, sweep_id: str, chunk_ids: list[str], kind: str, now: float
) -> None:
    """Queue lost chunks again (reconcile.py); their old leases go, the sweep notes when."""
    pipe = store.r.pipeline()
    if chunk_ids:
        pipe.hdel(key(sweep_id, "leases"), *chunk_ids)
    pipe.hset(key(sweep_id, "meta"), "requeued_at", repr(now))
    pipe.hincrby(key(sweep_id, "meta"), "chunks_requeued", len(chunk_ids))
    pipe.execute()
    _send_chunks(celery_app, sweep_id, chunk_ids, kind, attempt=f"-r{int(now)}")
    metrics.REQUEUED.inc(len(chunk_ids))


def finish(store: SweepStore, sweep_id: str) -> str:
    """Aggregate a sweep whose chunks are all in; returns what happened, in one word.

    Idempotent: a second call (a duplicate finish message) finds the summary and stops.
    """
    if store.summary(sweep_id) is not None:
        return "already"
    meta = store.meta(sweep_id)
    if not meta or meta["status"] not in ACTIVE:
        return "inactive"
    if int(meta["chunks_done"]) < int(meta["total_chunks"]):
        return "waiting"
    # A short claim, renewed while this finisher lives: if it is killed, another takes over.
    if not store.claim_aggregation(sweep_id, int(LEASE_SECONDS)):
        return "busy"
    heartbeat = AggregationHeartbeat(store, sweep_id).__enter__()
    try:
        spec = parse_stored_spec(store.spec(sweep_id))

        def results() -> Iterator[dict[str, Any]]:  # streamed: memory stays flat however big
            return (unpack(blob) for _chunk_id, blob in store.iter_chunk_blobs(sweep_id))

        started = float(meta.get("started", meta["created"]))
        finished = time.time()
        summary, replays = build_summary(
            spec,
            (),
            sweep_id,
            run_info("celery", started, finished, spec.total_games, submitted=float(meta["created"])),
            partials=_merged_partials(store, sweep_id, spec),
            paired=_paired_counts(store, sweep_id, spec),
        )
        summary["records"] = _write_records(sweep_id, spec, results(), meta.get("kind", "adhoc"))
        if summary["records"]:
            from .cards import report_of_folder

            summary["cards"] = report_of_folder(Path(summary["records"]["path"]) / "games")
        if meta.get("kind") == "nightly":
            # The drift is judged once the whole night is in (tasks.finish_night, night.py).
            metrics.export_balance(spec.game, summary, store)
            _maybe_write_report(summary, replays, spec)
        store.save_summary(sweep_id, summary, replays, finished)
        store.expire(sweep_id)
        metrics.SWEEP_SECONDS.labels(spec.game).observe(finished - float(meta["created"]))
        return "done"
    except (redis.ConnectionError, redis.TimeoutError):
        raise  # Redis is away: the finish is queued again by the next client that asks
    except Exception as exc:
        # A bug in aggregation or reporting would fail the same way on every retry: say so.
        store.set_status(sweep_id, "failed", error=f"aggregation failed: {type(exc).__name__}: {exc}")
        raise
    finally:
        heartbeat.__exit__(None, None, None)
        store.release_aggregation(sweep_id)


def _merged_partials(store: SweepStore, sweep_id: str, spec: SweepSpec) -> dict[int, CellPartial]:
    """Every cell's partial, merged from the chunks' stored partials a batch at a time;
    a chunk stored without one (by an older worker) is folded from its result."""
    seen: set[str] = set()

    def stream() -> Iterator[tuple[int, CellPartial]]:
        for chunk_id, blob in store.iter_partials(sweep_id):
            seen.add(chunk_id)
            yield int(chunk_id.split("-")[0]), CellPartial.from_dict(unpack(blob))
        for chunk_id in store.chunk_ids(sweep_id) - seen:
            blob = store.chunk_blob(sweep_id, chunk_id)
            if blob is not None:
                result = unpack(blob)
                yield result["cell"], of_chunk(spec, result)

    return merge_all(spec, stream())


def _paired_counts(store: SweepStore, sweep_id: str, spec: SweepSpec) -> dict[int, PairCounts]:
    """Every cell's paired counts against its base cell, read one block of seeds at a time
    (every cell's chunk of that block, one HMGET): memory holds one block, not the sweep."""
    by_block: dict[int, list[str]] = {}
    for chunk in chunks(spec):
        by_block.setdefault(chunk.block, []).append(chunk.id)

    def blocks() -> Iterator[dict[int, dict[str, Any]]]:
        for ids in by_block.values():
            block = {}
            for blob in store.chunk_blobs_of(sweep_id, ids):
                if blob is not None:
                    result = unpack(blob)
                    block[result["cell"]] = result
            yield block

    return count_blocks(spec, blocks())


def _write_records(
    sweep_id: str, spec: SweepSpec, results: Iterable[dict[str, Any]], kind: str
) -> dict[str, Any] | None:
    """Every finished sweep's per-game Parquet records (records.py), streamed from Redis,
    then the records past their retention deleted. A full disk loses the records, never
    the summary: the summary says so (`records: null`)."""
    from .aggregate import game_rows
    from .records import prune_records, records_root, write_sweep_records

    root = records_root()
    info = {"game": spec.game, "name": spec.name, "kind": kind, "spec": spec.to_dict()}
    try:
        written = write_sweep_records(root, sweep_id, game_rows(spec, results), info)
        gone = prune_records(root)
    except OSError:
        log.exception("per-game records of sweep %s not written under %s", sweep_id, root)
        return None
    if gone:
        log.info("per-game records past retention deleted: %s", ", ".join(gone))
    return written


def _maybe_write_report(summary: dict[str, Any], replays: dict[int, dict[str, Any]], spec: SweepSpec) -> None:
    """Nightly sweeps have no CLI waiting for them: write their report where told to (its
    per-game records are the sweep's records, `summary["records"]`, not a second copy)."""
    base = os.environ.get("CULTISTS_SWEEPS_DIR")
    if not base:
        return
    from .report import write_report

    out = Path(base) / f"nightly-{spec.game}-{summary['sweep']}"
    try:
        write_report(out, summary, None, replays)
    except OSError:  # the summary in Redis is the record; a full disk must not lose it
        log.exception("nightly report for %s not written to %s", spec.game, out)
        return
    log.info("nightly report for %s written to %s", spec.game, out)
