"""Long CPU work (rebuilding a replay with its bots, drawing a sweep report's plots) run
beside the request loop, not on it.

Under gunicorn's gevent workers every request of a process shares one OS thread: a
request that computed for seconds would stall every other request and stream of that
worker until it finished. Such work goes to one real thread instead; the hub keeps its
turns at the GIL (every switch interval), so other requests go on meanwhile, as they did
between gthread's threads. One thread, because the GIL runs one computation at a time
anyway and pyplot keeps global state. Without gevent (tests' threaded server, a Celery
worker) the work simply runs in the calling thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from services.platform.errors import PlatformError

T = TypeVar("T")

_pool: Any = None
_lock = threading.Lock()

# Works admitted at once per process: one computing, the rest waiting their turn. Past
# that a request is refused at once (503 + Retry-After) rather than queued without end:
# ten slow rebuilds must not make the eleventh request, or a cheap one behind them, wait
# minutes (issue 15). Each work also has its own wall-clock cap (see pages/replay.py).
MAX_ADMITTED = 4
RETRY_AFTER_SECONDS = 5
_admitted = threading.BoundedSemaphore(MAX_ADMITTED)


class Busy(PlatformError):
    """Every slot for long work is taken: try again shortly."""

    def __init__(self, message: str | None = None, retry_after: int = RETRY_AFTER_SECONDS) -> None:
        super().__init__(
            503,
            "busy",
            message
            or f"{MAX_ADMITTED} long computations are already running or waiting here; try again shortly",
            retry_after=retry_after,
        )


def gevent_active() -> bool:
    try:
        from gevent import monkey
    except ImportError:
        return False
    return bool(monkey.is_module_patched("threading"))


def run_cpu_bound(work: Callable[[], T]) -> T:
    """`work()`, computed off the gevent hub when there is one; Busy (503) when
    MAX_ADMITTED works are already admitted in this process."""
    if not _admitted.acquire(blocking=False):
        raise Busy()
    try:
        if not gevent_active():
            return work()
        global _pool
        with _lock:  # gevent's lock once patched: held only to make the pool once
            if _pool is None:
                from gevent.threadpool import ThreadPool

                _pool = ThreadPool(1)
        return _pool.apply(work)
    finally:
        _admitted.release()
