"""Celery tasks for live tables (queue `tables`): bot moves, deadlines, matchmaking.

Each task is a thin call into the live-play platform (services/platform/), the same services the gateway calls, so a bot's move takes the same
path to the same compare-and-set commit as a human's. Tasks are safe to run twice or
concurrently: a move made at a version that has moved on is refused by the commit and
simply dropped, so acks_late redelivery never doubles a move.
"""

from __future__ import annotations

import functools
import logging
import time

from services.platform.context import Platform
from services.platform.errors import PlatformError
from services.platform.settings import Settings

from .app import app

log = logging.getLogger("cultists.workers.tables")


@functools.cache
def live() -> Platform:
    """One per worker process, from the environment (REDIS_URL, ENGINE_ADDR_<GAME>); its
    follow-up tasks go out through this worker's own app."""
    return Platform.build(Settings.from_env(), app)


# Tries of one bot task against an unavailable engine (about two minutes at the retry
# interval) before it leaves the table to the deadline sweep, which keeps trying too.
ENGINE_RETRIES = 120


@app.task(name="workers.tables.advance_table", ignore_result=True, bind=True)
def advance_table(self, table_id: str) -> int:
    """Let every bot that must decide at this table move, until a human must. An engine
    (or Redis) that is away is waited for with backoff, not left to the next deadline:
    the bot moves within one retry interval of the engine being back."""
    tables = live().tables
    try:
        return tables.advance(table_id)
    except PlatformError as exc:
        if exc.status != 503:
            raise
        log.warning("bot move at table %s: %s; trying again", table_id, exc.message)
        raise self.retry(
            countdown=tables.retry_delay(self.request.retries), max_retries=ENGINE_RETRIES
        ) from None


@app.task(name="workers.tables.match_queue", ignore_result=True)
def match_queue(game: str, players: int) -> int:
    """One matchmaking pass over one queue, right after a ticket joined it."""
    return len(live().matchmaking.match(game, players))


@app.task(name="workers.tables.enforce_deadlines", ignore_result=True)
def enforce_deadlines() -> int:
    """Every second (beat): due seats' bots act, waiting queues widen and fill with bots,
    tables a matching pass formed but did not write are written, and finished rated
    tables whose rating update was interrupted are settled."""
    gw = live()
    now = time.time()
    moves = _guarded("deadlines", gw.tables.enforce_deadlines, now) or 0
    for game, players in gw.matchmaking.queues():
        _guarded(f"matchmaking {game}:{players}", gw.matchmaking.match, game, players, now)
    _guarded("forming tables", gw.matchmaking.finish_forming)
    _guarded("ratings", gw.ratings.settle_pending)
    return moves


@app.task(name="workers.tables.archive", ignore_result=True)
def archive() -> int:
    """Beat, every TABLES_ARCHIVE_SECONDS: finished tables past their grace period leave
    Redis for the archive (services/platform/archive.py)."""
    return live().archiver.run()


@app.task(name="workers.tables.reconcile", ignore_result=True)
def reconcile() -> dict[str, int]:
    """Beat, every TABLES_RECONCILE_SECONDS: refile tables whose index entries a crash cut
    off between a table's write and its index's (services/platform/store.py)."""
    return live().store.reconcile()


def _guarded(what: str, job, *args):
    """One part failing (an engine down) must not starve the others of their second."""
    try:
        return job(*args)
    except Exception:
        log.exception("enforce_deadlines: %s failed", what)
        return None
