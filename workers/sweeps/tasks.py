"""Celery tasks of balance sweeps: thin wrappers over `simulate`, `store` and `control`.

Crash safety comes from the app's configuration (late acks, reject on worker loss,
prefetch 1: workers/app.py) together with idempotent results here: a chunk's result is
keyed by its chunk id and stored at most once (store.py), so a chunk redelivered after
its worker was killed is simply played again and its second result is dropped. The
chunk task is also safe to *start* twice concurrently (a redelivery while the first
attempt still runs): whichever stores first counts, the other is a duplicate.

A chunk that raises is a bug in an engine or bot, not bad luck: it would raise again on
every retry (games are deterministic), so the sweep is marked failed with the chunk id
and the error, which names the seed to reproduce it. Only lost Redis connections retry.
"""

from __future__ import annotations

import logging
import os
import time
import traceback
from datetime import UTC, datetime

import redis
from celery import current_app, shared_task
from celery.signals import worker_process_shutdown, worker_ready

from . import control, metrics
from .nightly import standard_suite
from .plan import chunk_by_id
from .simulate import pack, simulate_chunk
from .spec import SweepSpec, parse_spec
from .store import FINISHED, SweepStore

log = logging.getLogger(__name__)

_stores: dict[str, SweepStore] = {}
_specs: dict[str, SweepSpec] = {}


def _store() -> SweepStore:
    """One store per broker URL and process (pool processes fork; connections must not be shared)."""
    url = current_app.conf.broker_url
    cache_key = f"{os.getpid()}:{url}"
    if cache_key not in _stores:
        _stores[cache_key] = SweepStore.from_url(url)
    return _stores[cache_key]


def _spec(store: SweepStore, sweep_id: str) -> SweepSpec:
    if sweep_id not in _specs:
        if len(_specs) > 64:
            _specs.clear()
        _specs[sweep_id] = parse_spec(store.spec(sweep_id))
    return _specs[sweep_id]


@shared_task(
    name="workers.sweeps.tasks.run_chunk",
    ignore_result=True,
    autoretry_for=(redis.ConnectionError, redis.TimeoutError),
    retry_backoff=True,
    max_retries=8,
)
def run_chunk(sweep_id: str, chunk_id: str) -> str:
    """Simulate one chunk and store its result once; queue the finish when it was the last."""
    store = _store()
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
        _finish_if_complete(store, sweep_id)
        return "duplicate"
    started = time.perf_counter()
    try:
        result = simulate_chunk(spec, chunk, should_stop=lambda: store.status(sweep_id) in FINISHED)
    except (redis.ConnectionError, redis.TimeoutError):
        raise  # the cancel check lost Redis: retried, not a failed chunk
    except Exception as exc:
        metrics.CHUNKS.labels(game, "failed").inc()
        error = f"{type(exc).__name__}: {exc} (games {chunk.start}..{chunk.start + chunk.games - 1}, " + (
            f"seeds from {spec.seed + chunk.start})\n{traceback.format_exc(limit=6)}"
        )
        log.error("sweep %s chunk %s failed: %s", sweep_id, chunk_id, error)
        store.record_failure(sweep_id, chunk_id, error)
        return "failed"
    if result is None:
        metrics.CHUNKS.labels(game, "cancelled").inc()
        return "cancelled"
    stored, done = store.store_chunk(sweep_id, chunk_id, pack(result), chunk.games)
    metrics.CHUNK_SECONDS.labels(game).observe(time.perf_counter() - started)
    if not stored:
        metrics.CHUNKS.labels(game, "duplicate").inc()
    else:
        metrics.CHUNKS.labels(game, "done").inc()
        metrics.GAMES.labels(game).inc(chunk.games)
    p = control.progress(store, sweep_id)
    if p is not None:
        metrics.PROGRESS.labels(sweep_id, game).set(p["games_done"] / max(1, p["total_games"]))
        if done >= p["total_chunks"]:
            finish.delay(sweep_id)
    return "stored" if stored else "duplicate"


def _finish_if_complete(store: SweepStore, sweep_id: str) -> None:
    control.nudge(store, current_app, sweep_id)


@shared_task(name="workers.sweeps.tasks.finish", bind=True, ignore_result=True, max_retries=40)
def finish(self, sweep_id: str) -> str:
    """Aggregate a complete sweep (once; duplicates find the summary and stop)."""
    outcome = control.finish(_store(), sweep_id)
    if outcome == "busy":
        # Another finisher holds the lock, or one died holding it: look again later.
        raise self.retry(countdown=15)
    log.info("sweep %s finish: %s", sweep_id, outcome)
    return outcome


@shared_task(name="workers.sweeps.tasks.run_nightly", ignore_result=True)
def run_nightly(games: int | None = None, day: int | None = None) -> list[str]:
    """Queue tonight's standard suite; each sweep compares itself with last night's when done."""
    store = _store()
    day = day if day is not None else int(datetime.now(UTC).strftime("%Y%m%d"))
    ids = []
    for spec in standard_suite(games):
        sweep_id = control.submit(spec, store, current_app, kind="nightly", extra={"day": str(day)})
        store.add_nightly(spec.game, day, sweep_id)
        ids.append(sweep_id)
        log.info("nightly %s: %s sweep %s, %s games", day, spec.game, sweep_id, spec.total_games)
    return ids


@worker_ready.connect
def _serve_metrics(sender=None, **_kwargs) -> None:
    """Serve /metrics from the worker's main process when WORKER_METRICS_PORT is set."""
    port = os.environ.get("WORKER_METRICS_PORT")
    if port:
        metrics.serve(int(port))


@worker_process_shutdown.connect
def _process_gone(pid=None, **_kwargs) -> None:
    metrics.process_exited(pid or os.getpid())
