"""Worker processes for local simulation: the one way ladders and sweeps start them."""

from __future__ import annotations

import multiprocessing
import multiprocessing.context
from collections.abc import Sequence


def pool_context(preload: Sequence[str]) -> multiprocessing.context.BaseContext:
    """Pool processes come from a fork server, not a fork of the caller.

    The caller may hold threads (a Redis health check, Celery's connection pool, gRPC's
    pollers, rich's refresh thread); forking a process with threads can copy a lock in its
    held state and hang the child. The fork server is a fresh single-threaded process that
    imports `preload` once, so workers still start fast.
    """
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))
    return ctx
