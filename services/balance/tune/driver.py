"""A tune's driver (run by a task on the `tunes` queue) and its reconciler (beat).

A tune's driver proposes configs, queues each batch's evaluations as sweeps (chunk tasks
on the `sweeps` queue, exactly as `cultists tune` does) and waits for them, for as long as
the tune takes. So it runs as a task of its own on a dedicated queue with its own worker
(`cultists run` starts one; docker-compose and Kubernetes run `worker-tunes`), never in a
gateway request and never in a sweep worker's slot, where it would sit waiting on the
chunks it queued.

Surviving the driver's death: the driver holds a lease in Redis (renewed by a thread,
like a chunk's, `workers/sweeps/leases.py`). If its worker dies, the lease runs out and
beat's `reconcile` (every TUNE_RECONCILE_SECONDS) queues the driver again. The new driver
replays the search from the start: the search is deterministic (same spec and seed, same
trials), and every evaluation the dead driver queued is found again by its spec
(`store.SweepMemo`), so the games already played (or still being played by the sweep
workers meanwhile) are read, not played again. The tune ends with the same summary it
would have had. A duplicate delivery of the task (late acks) finds the lease held, or the
tune finished, and stops at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
import traceback
from typing import Any

import redis

from services.balance.sweeps.control import TaskSender
from services.balance.sweeps.store import SweepStore

from .store import ACTIVE, TuneStore

log = logging.getLogger(__name__)

DRIVE_TASK = "workers.tune.tasks.drive"
QUEUE = "tunes"
LEASE_SECONDS = float(os.environ.get("TUNE_LEASE_SECONDS", "60"))
POLL_SECONDS = float(os.environ.get("TUNE_POLL_SECONDS", "0.5"))
# How long a driver queued again by the reconciler is waited for before it is queued again.
REQUEUE_PATIENCE = float(os.environ.get("TUNE_REQUEUE_PATIENCE_SECONDS", "300"))
# The driver writes its progress at most this often (the runner polls faster).
PROGRESS_SECONDS = 1.0


class Cancelled(Exception):
    """The tune was cancelled (POST /api/tunes/<id>/cancel): the driver stops."""


def send_drive(app: TaskSender, tune_id: str, attempt: str = "") -> None:
    """Queue a tune's driver by name (the gateway's light client has no task code)."""
    app.send_task(
        DRIVE_TASK, args=[tune_id], task_id=f"tune-{tune_id}{attempt}", queue=QUEUE, ignore_result=True
    )


class _Lease:
    """Holds the driver's lease while the block runs; `lost` says if another took it."""

    def __init__(self, tunes: TuneStore, tune_id: str, token: str) -> None:
        self.tunes, self.tune_id, self.token = tunes, tune_id, token
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"tune-lease-{tune_id}", daemon=True)

    def _beat(self) -> None:
        while not self._stop.wait(LEASE_SECONDS / 3):
            try:
                if not self.tunes.renew_driver(self.tune_id, self.token, LEASE_SECONDS):
                    self.lost.set()
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                log.warning("tune %s: lease not renewed: %s", self.tune_id, exc)

    def __enter__(self) -> _Lease:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):  # else it runs out
            self.tunes.release_driver(self.tune_id, self.token)


def _progress_writer(tunes: TuneStore, tune_id: str):
    """The driver's progress callback: search games, trials, best so far, into the meta hash.

    A replacement driver replays the search from its start (reading, not playing, what the
    dead one had played): its figures stay at the dead driver's until they pass them, so
    the percentage a designer watches never runs backwards."""
    last = [0.0]
    meta = tunes.meta(tune_id)
    floor = {"spent": int(meta.get("spent", 0)), "trials": int(meta.get("trials", 0))}

    def write(p: dict[str, Any], force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - last[0] < PROGRESS_SECONDS and p.get("phase") != "batch":
            return
        last[0] = now
        fields: dict[str, Any] = {"spent": max(floor["spent"], int(p.get("spent", 0)))}
        if p.get("phase") in ("confirming", "playing", "batch"):
            fields["phase"] = "confirming" if p["phase"] == "confirming" else "searching"
        if "trials" in p:
            fields["trials"] = max(floor["trials"], int(p["trials"]))
        if p.get("best") is not None:
            fields["best"] = p["best"]
            fields["best_score"] = repr(p["best_score"])
        tunes.update(tune_id, **fields)

    return write


def drive(tune_id: str, url: str, sender: TaskSender, cluster: bool = False) -> str:
    """Run one tune from its spec in Redis (`url`) to its summary in Redis (see the module
    doc); its evaluation sweeps are queued through `sender`."""
    from .evaluate import CeleryRunner
    from .report import render_plots
    from .run import run_tune
    from .spec import parse_tune_spec
    from .store import SweepMemo

    tunes = TuneStore.from_url(url, cluster)
    status = tunes.status(tune_id)
    if status not in ACTIVE:
        return f"skipped ({status})"
    token = secrets.token_hex(8)
    if not tunes.claim_driver(tune_id, token, LEASE_SECONDS):
        return "busy"  # another driver runs it (a duplicate delivery)
    with _Lease(tunes, tune_id, token) as lease:
        drivers = tunes.mark_running(tune_id)
        if drivers > 1:
            log.warning("tune %s: driver %s replays the search (the last one died)", tune_id, drivers)
        try:
            spec = parse_tune_spec(tunes.spec(tune_id))
            sweeps = SweepStore.from_url(url, cluster)
            celery_runner = CeleryRunner(sweeps, sender, poll=POLL_SECONDS, memo=SweepMemo(tunes, tune_id))
            write = _progress_writer(tunes, tune_id)
            # A tune whose early stop is overturned confirms twice: its figures count both.
            confirmed = [0]

            def runner(sweep, on_progress=None):
                if lease.lost.is_set():
                    raise RuntimeError("another driver took this tune's lease")
                if tunes.status(tune_id) not in ACTIVE:
                    raise Cancelled(tune_id)
                if on_progress is None:  # the confirmation: its own progress figures
                    before = confirmed[0]
                    confirmed[0] += sweep.total_games
                    tunes.update(tune_id, phase="confirming", confirm_games_total=confirmed[0])

                    def on_progress(done: int, _total: int) -> None:
                        tunes.update(tune_id, confirm_games_done=before + done)

                return celery_runner(sweep, on_progress)

            summary = run_tune(spec, runner, tune_id, write, mode="celery")
            summary["run"]["drivers"] = drivers
            summary["run"]["sweeps"] = celery_runner.sweep_ids
            summary["run"]["sweeps_reused"] = len(celery_runner.reused)
            tunes.save_summary(tune_id, summary, render_plots(summary))
        except (redis.ConnectionError, redis.TimeoutError):
            raise  # retried: the replay finds what was queued
        except Exception as exc:
            if lease.lost.is_set():
                return "lost lease"
            if tunes.status(tune_id) == "cancelled":  # its sweeps were cancelled with it
                log.info("tune %s cancelled", tune_id)
                return "cancelled"
            log.error("tune %s failed: %s", tune_id, traceback.format_exc(limit=8))
            tunes.fail(tune_id, f"{type(exc).__name__}: {exc}")
            return "failed"
    log.info("tune %s done: %s trials, %s games", tune_id, summary["trials"], summary["games"])
    return "done"


def reconcile(url: str, sender: TaskSender, cluster: bool = False) -> dict[str, list[str]]:
    """Beat: queue the driver again for every running tune whose driver's lease ran out."""
    tunes = TuneStore.from_url(url, cluster)
    requeued = []
    now = time.time()
    for tune_id in tunes.active_ids():
        meta = tunes.meta(tune_id)
        if meta.get("status") != "running" or tunes.has_driver(tune_id):
            continue
        # One message at a time: a driver queued again may wait behind other tunes' drivers.
        if now - float(meta.get("requeued_at", 0)) < REQUEUE_PATIENCE:
            continue
        send_drive(sender, tune_id, attempt=f"-r{int(now)}")
        tunes.update(tune_id, requeued_at=repr(now))
        requeued.append(tune_id)
    if requeued:
        log.warning("tunes whose driver died, queued again: %s", requeued)
    return {"requeued": requeued}
