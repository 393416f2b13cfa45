"""Player ratings: OpenSkill's Plackett-Luce model, one rating per player and game.

Ranks come from the engine's returns (a higher return is a better place; a draw shares a
place), so every game's scoring feeds the same model. Bots take part in the update with a
fixed default rating but are never written back: a bot is not a player whose skill we track.
"""

from __future__ import annotations

from collections.abc import Sequence

import orjson
import redis
from openskill.models import PlackettLuce

from .store import RATINGS_PENDING, table_key

MODEL = PlackettLuce()


def ratings_key(game: str) -> str:
    """player id -> `mu sigma` (the ratings hash of one game)."""
    return f"gw:ratings:{game}"


DEFAULT = (MODEL.mu, MODEL.sigma)


def rate(ratings: Sequence[tuple[float, float]], returns: Sequence[float]) -> list[tuple[float, float]]:
    """New (mu, sigma) per seat after one match, given each seat's (mu, sigma) and return."""
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma in ratings]
    updated = MODEL.rate(teams, ranks=[-r for r in returns])
    return [(team[0].mu, team[0].sigma) for team in updated]


def forfeit(returns: Sequence[float], left: Sequence[bool]) -> list[float]:
    """Returns with every seat whose player left during play ranked below all who stayed:
    leaving a rated game early counts as a loss, whatever the bot made of the seat."""
    if not any(left):
        return list(returns)
    floor = min(returns) - 1.0
    return [floor if gone else r for r, gone in zip(returns, left, strict=True)]


class RatingBook:
    """Ratings in Redis, updated exactly once per finished rated table.

    The move that ends a rated game marks the table pending in the same script that writes
    the final state; `settle` then updates the ratings and clears the mark in one
    transaction (WATCH on the ratings hash), so a crash in between leaves the mark for the
    beat task to settle later, and two settlers cannot both count the same game.
    """

    def __init__(self, client: redis.Redis) -> None:
        self.redis = client

    def get(self, game: str, player: str) -> tuple[float, float]:
        """`player` is a player id (players.py)."""
        raw = self.redis.hget(ratings_key(game), player)
        if raw is None:
            return DEFAULT
        mu, sigma = raw.split()
        return float(mu), float(sigma)

    def settle(self, table_id: str) -> bool:
        """Apply one finished table's result; False if it was already settled or is gone."""
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    raw = self.redis.hmget(table_key(table_id), "game", "players", "returns")
                    if raw[0] is None:
                        self.redis.srem(RATINGS_PENDING, table_id)
                        return False
                    game, players = raw[0].decode(), int(raw[1])
                    key = ratings_key(game)
                    pipe.watch(key, RATINGS_PENDING)
                    if not pipe.sismember(RATINGS_PENDING, table_id):
                        pipe.reset()
                        return False
                    ids = pipe.hmget(table_key(table_id), [f"pid:{i}" for i in range(players)])
                    left = pipe.hmget(table_key(table_id), [f"left:{i}" for i in range(players)])
                    # Ratings belong to player ids; a seat whose player left is still theirs.
                    seats = [n.decode() if n else None for n in ids]
                    before = [self.get(game, n) if n else DEFAULT for n in seats]
                    after = rate(before, forfeit(orjson.loads(raw[2]), [x is not None for x in left]))
                    pipe.multi()
                    updates = {n: f"{mu} {sigma}" for n, (mu, sigma) in zip(seats, after, strict=True) if n}
                    if updates:
                        pipe.hset(key, mapping=updates)
                    pipe.srem(RATINGS_PENDING, table_id)
                    pipe.execute()
                    return True
                except redis.WatchError:
                    continue

    def settle_pending(self) -> int:
        return sum(self.settle(m.decode()) for m in self.redis.smembers(RATINGS_PENDING))
