"""How a tune plays its games: every evaluation is a small sweep, run locally or on Celery.

A tune never simulates by itself. It hands a `SweepSpec` (a grid of candidate configs on a
block of shared seeds) to a runner and gets the chunk results back, so the Celery path is
exactly a sweep's: chunk tasks on the `sweeps` queue, leases, the reconciler requeueing a
chunk whose worker died, idempotent results. `--local` runs the same plan in a process pool
(`services/balance/sweeps/local.py`), so both paths give the same trials.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.spec import SweepSpec

Progress = Callable[[int, int], None]


class Runner(Protocol):
    """Plays every chunk of a sweep and returns the chunk results (any order)."""

    def __call__(self, sweep: SweepSpec, on_progress: Progress | None = None) -> list[dict[str, Any]]: ...


class LocalRunner:
    """The sweep in a local process pool; `processes=1` plays in this process."""

    def __init__(self, processes: int | None = None) -> None:
        self.processes = processes

    def __call__(self, sweep: SweepSpec, on_progress: Progress | None = None) -> list[dict[str, Any]]:
        return simulate_local(sweep, self.processes, on_progress)


class CeleryRunner:
    """The sweep queued on Celery like any other (`control.submit`), waited for, read back.

    The sweep's own crash safety applies: a worker dying mid-chunk is recovered by the
    lease and the reconciler, a finish lost is nudged again here. With a `memo` (a tune
    driven by the `tunes` worker, tasks.py) an evaluation already queued by an earlier
    driver of the same tune is found again and read, not played again.
    """

    def __init__(
        self, store: Any, app: Any, poll: float = 0.2, timeout: float = 3600.0, memo: Any = None
    ) -> None:
        self.store, self.app, self.poll, self.timeout, self.memo = store, app, poll, timeout, memo
        self.sweep_ids: list[str] = []
        self.reused: list[str] = []  # evaluations an earlier driver had queued

    def __call__(self, sweep: SweepSpec, on_progress: Progress | None = None) -> list[dict[str, Any]]:
        from services.balance.sweeps import control
        from services.balance.sweeps.simulate import unpack

        sweep_id = self.memo.find(sweep.to_dict(), self.store) if self.memo is not None else None
        if sweep_id is not None:
            self.reused.append(sweep_id)
        else:
            sweep_id = control.submit(sweep, self.store, self.app)
            if self.memo is not None:
                self.memo.remember(sweep.to_dict(), sweep_id)
        self.sweep_ids.append(sweep_id)
        deadline = time.monotonic() + self.timeout
        last_nudge = time.monotonic()
        while True:
            p = control.progress(self.store, sweep_id)
            if p is None:
                raise RuntimeError(f"tune evaluation sweep {sweep_id} vanished from Redis")
            if on_progress:
                on_progress(p["games_done"], p["total_games"])
            if p["status"] in ("cancelled", "failed"):
                raise RuntimeError(f"tune evaluation sweep {sweep_id} {p['status']}: {p.get('error') or ''}")
            if p["chunks_done"] >= p["total_chunks"]:
                break  # every chunk stored; the tune needs the results, not the finish
            if time.monotonic() > deadline:
                raise TimeoutError(f"tune evaluation sweep {sweep_id} not done after {self.timeout:.0f} s")
            if time.monotonic() - last_nudge > 30:
                control.nudge(self.store, self.app, sweep_id)
                last_nudge = time.monotonic()
            time.sleep(self.poll)
        return [unpack(blob) for _chunk_id, blob in self.store.iter_chunk_blobs(sweep_id)]
