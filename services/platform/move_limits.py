"""How many moves a seat may send at one decision: per seat and per decision, not per writer.

A client that moves once each time it is asked sends one move per version of its table,
however fast the game goes (bots answering in milliseconds, a chain of out-of-turn
answers), so a limit on writes per second would refuse exactly the clients that play
well. What is worth refusing is a seat sending move after move at one decision (a loop
retrying an illegal action, a client that lost its place): each seat gets `limit` tries
per version of its table within `window` seconds, counted in Redis so every gateway
process shares the count. The count's key carries the table's hash tag
(`gw:{t:<table id>}:tries:<seat>:<version>`): one slot with the table's own keys on a
Redis Cluster, and one round trip (INCR, EXPIRE NX, TTL) per move.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.runtime.redis_types import RedisClient


def tries_key(table_id: str, seat: int, version: int) -> str:
    return f"gw:{{t:{table_id}}}:tries:{seat}:{version}"


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

    def count(self, table_id: str, seat: int, version: int) -> Tries:
        key = tries_key(table_id, seat, version)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.incr(key)
            pipe.expire(key, self.window_seconds, nx=True)
            pipe.ttl(key)
            used, _, ttl = pipe.execute()
        return Tries(self.limit, int(used), max(1, int(ttl)))
