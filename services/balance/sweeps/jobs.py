"""What the sweep tasks do, as plain functions a test calls without a broker.

The Celery tasks (workers/sweeps/tasks.py) are a line each over these.

Crash safety comes from the app's configuration (late acks, reject on worker loss,
prefetch 1: workers/app.py) together with idempotent results here: a chunk's result is
keyed by its chunk id and stored at most once (store.py), so a chunk redelivered after
its worker was killed is simply played again and its second result is dropped. The
chunk task is also safe to *start* twice concurrently (a redelivery while the first
attempt still runs): whichever stores first counts, the other is a duplicate.

While a chunk is played its lease is renewed (leases.py); beat's `reconcile` queues again
the chunks whose lease ran out or whose message was lost (reconcile.py), so a sweep never
waits for someone to notice.

A chunk that raises is a bug in an engine or bot, not bad luck: it would raise again on
every retry (games are deterministic), so the sweep is marked failed with the chunk id
and the error, which names the seed to reproduce it. Only lost Redis connections retry.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis

from . import control, metrics, night
from .control import TaskSender
from .leases import Heartbeat
from .partial import of_chunk
from .plan import chunk_by_id
from .reconcile import reconcile
from .simulate import pack, simulate_chunk, unpack
from .spec import SweepSpec, parse_stored_spec
from .store import FINISHED, SweepStore

log = logging.getLogger(__name__)

# How long a played chunk waits for Redis to come back before giving up (and being retried).
STORE_PATIENCE = float(os.environ.get("SWEEP_STORE_PATIENCE_SECONDS", "120"))
# How long finish_night waits for a night's sweeps before judging the games that finished.
NIGHT_PATIENCE = float(os.environ.get("NIGHTLY_PATIENCE_SECONDS", 20 * 3600))

_stores: dict[str, SweepStore] = {}
_specs: dict[str, SweepSpec] = {}


def store_for(url: str, cluster: bool = False) -> SweepStore:
    """One store per URL and process (pool processes fork; connections must not be shared)."""
    cache_key = f"{os.getpid()}:{url}:{cluster}"
    if cache_key not in _stores:
        _stores[cache_key] = SweepStore.from_url(url, cluster)
    return _stores[cache_key]


def _spec(store: SweepStore, sweep_id: str) -> SweepSpec:
    if sweep_id not in _specs:
        if len(_specs) > 64:
            _specs.clear()
        _specs[sweep_id] = parse_stored_spec(store.spec(sweep_id))
    return _specs[sweep_id]


def play_chunk(
    store: SweepStore,
    sender: TaskSender,
    sweep_id: str,
    chunk_id: str,
    nightly_waiting: Callable[[], bool] | None = None,
) -> str:
    """Simulate one chunk and store its result once; queue the finish when it was the last.
    Raises redis.ConnectionError/TimeoutError only when Redis stayed away past our
    patience (the task retries); anything else the chunk raises fails the sweep.

    A chunk of any sweep but a nightly one also stops when `nightly_waiting()` says yes
    (asked with the cancel check), keeps the games it finished (`keep_progress`), queues
    itself again and frees the process for the nightly (control.py: "yields"); its next
    run plays on from there."""
    status = store.mark_started(sweep_id)
    if status is None or status in FINISHED:
        return f"skipped ({status})"
    try:
        spec = _spec(store, sweep_id)
        chunk = chunk_by_id(spec, chunk_id)
    except (redis.ConnectionError, redis.TimeoutError):
        raise
    except Exception as exc:  # e.g. a worker without the game installed: say so, don't hang
        metrics.CHUNKS.labels("unknown", "failed").inc()
        store.record_failure(
            sweep_id, chunk_id, f"cannot plan chunk on this worker: {type(exc).__name__}: {exc}"
        )
        return "failed"
    game = spec.game
    if store.has_chunk(sweep_id, chunk_id):
        metrics.CHUNKS.labels(game, "duplicate").inc()
        control.nudge(store, sender, sweep_id)
        return "duplicate"
    kind = store.meta_field(sweep_id, "kind") or "adhoc"
    gives_way = nightly_waiting is not None and kind != "nightly"

    def should_stop() -> bool:
        return _cancelled(store, sweep_id) or (gives_way and _asked(nightly_waiting))

    kept = store.progress_of(sweep_id, chunk_id)
    progress: dict[str, Any] = unpack(kept) if kept is not None else {}
    started = time.perf_counter()
    try:
        with Heartbeat(store, sweep_id, chunk_id):
            result = simulate_chunk(spec, chunk, should_stop=should_stop, progress=progress)
            if result is not None:
                # The chunk's partial aggregate is folded here, in parallel on the workers,
                # so the finish only merges small partials (partial.py).
                part = pack(of_chunk(spec, result).to_dict())
                stored, done = _store_result(store, sweep_id, chunk_id, pack(result), chunk.games, part)
    except (redis.ConnectionError, redis.TimeoutError):
        raise  # Redis stayed away past our patience: retried, not a failed chunk
    except Exception as exc:
        metrics.CHUNKS.labels(game, "failed").inc()
        error = f"{type(exc).__name__}: {exc} (games {chunk.start}..{chunk.start + chunk.games - 1}, " + (
            f"seeds from {spec.seed + chunk.start})\n{traceback.format_exc(limit=6)}"
        )
        log.error("sweep %s chunk %s failed: %s", sweep_id, chunk_id, error)
        store.record_failure(sweep_id, chunk_id, error)
        return "failed"
    if result is None:
        if not _cancelled(store, sweep_id):  # it stopped for the nightly: play on later
            store.keep_progress(sweep_id, chunk_id, pack(progress))
            control.yield_chunk(store, sender, sweep_id, chunk_id, kind)
            metrics.CHUNKS.labels(game, "yielded").inc()
            log.info("sweep %s chunk %s gave way to waiting nightly chunks", sweep_id, chunk_id)
            return "yielded"
        metrics.CHUNKS.labels(game, "cancelled").inc()
        return "cancelled"
    if kept is not None:
        store.drop_progress(sweep_id, chunk_id)
    metrics.CHUNK_SECONDS.labels(game).observe(time.perf_counter() - started)
    if not stored:
        metrics.CHUNKS.labels(game, "duplicate").inc()
    else:
        metrics.CHUNKS.labels(game, "done").inc()
        metrics.GAMES.labels(game).inc(chunk.games)
    if done >= int(store.meta(sweep_id).get("total_chunks", 0) or 0):
        control.nudge(store, sender, sweep_id)
    return "stored" if stored else "duplicate"


def _cancelled(store: SweepStore, sweep_id: str) -> bool:
    """The cancel check between games; Redis away (a restart) is not a cancel: play on."""
    try:
        return store.status(sweep_id) in FINISHED
    except (redis.ConnectionError, redis.TimeoutError):
        return False


def _asked(check: Callable[[], bool] | None) -> bool:
    """`check()`, with Redis away (a restart) taken as no: play on."""
    try:
        return check is not None and bool(check())
    except (redis.ConnectionError, redis.TimeoutError):
        return False


def _store_result(
    store: SweepStore, sweep_id: str, chunk_id: str, blob: bytes, games: int, partial: bytes
) -> tuple[bool, int]:
    """Store a played chunk, waiting out a Redis restart rather than throwing the games away."""
    deadline = time.monotonic() + STORE_PATIENCE
    delay = 0.25
    while True:
        try:
            return store.store_chunk(sweep_id, chunk_id, blob, games, partial)
        except (redis.ConnectionError, redis.TimeoutError):
            if time.monotonic() > deadline:
                raise
            log.warning("sweep %s chunk %s: Redis away, storing again in %.1f s", sweep_id, chunk_id, delay)
            time.sleep(delay)
            delay = min(delay * 2, 5.0)


def reconcile_pass(store: SweepStore, sender: TaskSender, broker: Any = None) -> dict[str, object]:
    """Beat, every SWEEP_RECONCILE_SECONDS: queue again what no worker will play
    (reconcile.py); `broker` as there."""
    # One pass at a time: two overlapping passes would only queue the same chunks twice.
    if not store.r.set("cultists:sweeps:reconciling", "1", nx=True, ex=60):
        return {"skipped": True}
    try:
        return reconcile(store, sender, broker=broker)
    finally:
        store.r.delete("cultists:sweeps:reconciling")


def start_night(
    store: SweepStore, sender: TaskSender, games: int | None, day: int | None
) -> tuple[int, dict[str, str]]:
    """Queue tonight's standard suite; returns the day and each game's sweep id."""
    day = day if day is not None else int(datetime.now(UTC).strftime("%Y%m%d"))
    ids: dict[str, str] = {}
    for spec in night.suite(games):
        sweep_id = control.submit(spec, store, sender, kind="nightly", extra={"day": str(day)})
        store.add_nightly(spec.game, day, sweep_id)
        ids[spec.game] = sweep_id
        log.info("nightly %s: %s sweep %s, %s games", day, spec.game, sweep_id, spec.total_games)
    return day, ids


def judge_night(store: SweepStore, day: int, sweeps: dict[str, str], queued: float | None) -> str | None:
    """Once every sweep of the night has finished: compare with the last stored night in one
    BH family, store the night (night.close_night, the code `cultists nightly` runs), and
    export the drift gauges; returns the night's id. None while sweeps are still running
    (the caller looks again later). A night whose sweeps are not all in after
    NIGHT_PATIENCE (a stuck sweep) is judged on the games that finished, so one stuck game
    does not hide the rest."""
    statuses = {game: store.status(sweep_id) for game, sweep_id in sweeps.items()}
    waited = time.time() - (queued or time.time())
    if any(status not in FINISHED for status in statuses.values()) and waited < NIGHT_PATIENCE:
        return None
    tonight = {}
    for game, sweep_id in sweeps.items():
        summary = store.summary(sweep_id)
        if statuses[game] != "done" or summary is None:
            log.warning(
                "nightly %s: %s sweep %s %s, left out of the comparison", day, game, sweep_id, statuses[game]
            )
            continue
        # The outcomes stay in Redis: comparing and storing the night read them a few
        # chunks at a time, so the night's memory does not grow with its chunks.
        tonight[game] = night.night_game_of_sweep(store, sweep_id, summary)
    drift = night.close_night(
        night.NightArchive(night.nightly_dir()),
        tonight,
        info={"day": day, "sweeps": sweeps, "mode": "celery"},
    )
    for game, part in drift["games"].items():
        store.set_latest_drift(game, {**part, "day": day, "night": drift["night"], "sweep": sweeps[game]})
        metrics.export_drift(game, part, store)
    log.info("nightly %s judged: %s", day, {g: len(p["drifted"]) for g, p in drift["games"].items()})
    return drift["night"]
