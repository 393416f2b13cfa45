"""Waiting tables per owner (issue 27, item 4): one player, or one address for unsigned
clients, holds at most `cap` tables open and waiting at once.

A waiting table lives `waiting_ttl_seconds` (store.create's EXPIRE), but without a cap one
guest opened 600 six-seat tables in 38 s, and the lobby, which lists at most 200, showed
nothing else. Each owner's open tables are a sorted set `gw:{own:<owner>}:waiting` (table
id -> when opened; its own slot), expiring with the tables. Before a new table is opened,
entries of tables no longer waiting (started, expired, gone) are dropped, one status read
each (at most `cap` of them), and a full set is 429 `too_many_tables`.
"""

from __future__ import annotations

import time

from services.runtime.redis_types import RedisClient

from .errors import PlatformError
from .keys import table_key


def waiting_key(owner: str) -> str:
    return f"gw:{{own:{owner}}}:waiting"


class WaitingCap:
    def __init__(self, client: RedisClient, cap: int, ttl_seconds: int) -> None:
        self.redis = client
        self.cap = cap
        self.ttl_seconds = ttl_seconds

    def check(self, owner: str) -> None:
        """429 if `owner` already holds `cap` waiting tables."""
        if self.cap <= 0:
            return
        key = waiting_key(owner)
        self.redis.zremrangebyscore(key, "-inf", time.time() - self.ttl_seconds)
        held = [raw.decode() for raw in self.redis.zrange(key, 0, -1)]
        gone = [t for t in held if self.redis.hget(table_key(t), "status") != b"waiting"]
        if gone:
            self.redis.zrem(key, *gone)
        if len(held) - len(gone) >= self.cap:
            raise PlatformError(
                429,
                "too_many_tables",
                f"you hold {self.cap} tables waiting for players, the most one player or address may; "
                "start or leave one (an empty one expires by itself)",
                limit=self.cap,
                retry_after=60,
            )

    def note(self, owner: str, table_id: str) -> None:
        if self.cap <= 0:
            return
        key = waiting_key(owner)
        with self.redis.pipeline(transaction=True) as pipe:  # one key: one slot
            pipe.zadd(key, {table_id: time.time()})
            pipe.expire(key, self.ttl_seconds)
            pipe.execute()
