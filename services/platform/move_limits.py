"""How many moves a seat may send at one decision: per seat and per decision, not per writer.

A client that moves once each time it is asked sends one move per version of its table,
however fast the game goes (bots answering in milliseconds, a chain of out-of-turn
answers), so a limit on writes per second would refuse exactly the clients that play
well. What is worth refusing is a seat sending move after move at one decision (a loop
retrying an illegal action, a client that lost its place): each seat gets `limit` tries
per version of its table within `window` seconds, counted in Redis so every gateway
process shares the count.

The count is a field of the table's own hash (`tries:<seat>`), not a key of its own: the
move's request has just read the hash (so the count's window is known without a read),
one HINCRBY counts the try atomically before anything else is done (racing tries each get
their own number: never more than `limit` pass), and the commit that moves the version
sets every seat's count back to 0 in the HSET it makes anyway. So a try costs one command
where a key per seat and version cost three (INCR, EXPIRE NX, TTL) and left a key behind
per move. A seat past its limit waits `window` seconds from its first refused try at this
decision (`tries_at:<seat>`), then is counted afresh (tries_window.lua: the only extra
step, and only for a try past the limit). A try that lands just after another seat's
commit is counted at the new decision: one try too many there, never one too few.

Only a table being played is counted: one waiting or finished is refused without any work
(not started, game over), and a playing table is never deleted, so HINCRBY never creates
a stray hash for a table that has gone (finishing, then the archive's grace, take minutes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from services.runtime.redis_types import RedisClient

from .keys import table_key
from .store import Table, lua_source


@dataclass(frozen=True)
class Tries:
    """One seat's count at one decision: what the RateLimit-* headers say."""

    limit: int
    used: int
    reset_seconds: int

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)

    @property
    def refused(self) -> bool:
        return self.used > self.limit


class MoveLimits:
    def __init__(self, client: RedisClient, limit: int, window_seconds: int) -> None:
        self.redis = client
        self.limit = limit
        self.window_seconds = window_seconds
        self._window = client.register_script(lua_source("tries_window"))

    def count(self, table: Table, seat: int, now: float) -> Tries:
        """Count one try of `seat` at `table` (as just loaded) and say where it stands."""
        if table.status != "playing":
            return Tries(self.limit, 0, self.window_seconds)
        used = int(self.redis.hincrby(table_key(table.id), f"tries:{seat}", 1))
        opened = table.seats[seat].tries_at
        decided = table.moved_at or table.created
        if used > self.limit:
            args = [seat, now, self.window_seconds, used]
            tries, start = self._window(keys=[table_key(table.id)], args=args)
            used, opened = int(tries), float(start) if start else None
        elif opened is not None and opened < decided:
            opened = None  # a window of an earlier decision
        reset = self.window_seconds if opened is None else math.ceil(opened + self.window_seconds - now)
        return Tries(self.limit, used, max(1, reset))
