"""Player ratings: OpenSkill's Plackett-Luce model, one rating per player and game.

Ranks come from the engine's returns (a higher return is a better place; a draw shares a
place), so every game's scoring feeds the same model. Bots take part in the update with a
fixed default rating but are never written back: a bot is not a player whose skill we track.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import orjson
from openskill.models import PlackettLuce

from services.runtime.redis_types import RedisClient

from .keys import ratings_key, settled_key, table_key
from .store import TableStore, lua_source

MODEL = PlackettLuce()


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


# How long a table stays marked settled: longer than it can be settled again (its record
# lives at most finished_ttl_seconds, default 7 days), so the marks never grow without end.
SETTLED_KEEP_SECONDS = 8 * 24 * 3600
# The table record's field holding what its settlement changed (JSON: seat -> [before, after]).
CHANGE_FIELD = "rating_change"


class RatingBook:
    """Ratings in Redis, updated exactly once per finished rated table.

    The move that ends a rated game lists the table to be rated in its index shard
    (store.py); `settle` reads the result and the players' ratings, then applies the
    update in one script in the game's ratings slot that also marks the table settled
    and refuses if a rating changed since it was read (then it reads again). So a crash
    anywhere leaves the table listed for the beat task to settle later, and two settlers
    cannot both count the same game, nor lose each other's update.
    """

    def __init__(self, client: RedisClient, store: TableStore) -> None:
        self.redis = client
        self.store = store
        self._settle = client.register_script(lua_source("settle"))

    def get(self, game: str, player: str) -> tuple[float, float]:
        """`player` is a player id (players.py)."""
        return _parse(self.redis.hget(ratings_key(game), player))

    def settle(self, table_id: str) -> bool:
        """Apply one finished table's result; False if it was already settled or is gone."""
        players = self.redis.hget(table_key(table_id), "players")
        if players is None:
            self.store.rated(table_id)
            return False
        n = int(players)
        fields = ["game", "returns", *(f"pid:{i}" for i in range(n)), *(f"left:{i}" for i in range(n))]
        raw = self.redis.hmget(table_key(table_id), fields)
        game, returns = raw[0].decode(), orjson.loads(raw[1])
        # Ratings belong to player ids; a seat whose player left is still theirs.
        seats = [p.decode() if p else None for p in raw[2 : 2 + n]]
        left = [x is not None for x in raw[2 + n :]]
        while True:
            stored = self.redis.hmget(ratings_key(game), [p for p in seats if p]) if any(seats) else []
            before_raw = dict(zip([p for p in seats if p], stored, strict=True))
            before = [_parse(before_raw[p]) if p else DEFAULT for p in seats]
            after = rate(before, forfeit(returns, left))
            args: list[str | float] = [table_id, time.time(), SETTLED_KEEP_SECONDS]
            for p, (mu, sigma) in zip(seats, after, strict=True):
                if p:
                    was = before_raw[p]
                    args += [p, was.decode() if was is not None else "", f"{mu} {sigma}"]
            outcome = int(self._settle(keys=[ratings_key(game), settled_key(game)], args=args))
            if outcome == 1:  # what the table's end screen shows: each player's before and after
                change = {str(i): [before[i][0], after[i][0]] for i, p in enumerate(seats) if p}
                self.redis.hset(table_key(table_id), CHANGE_FIELD, orjson.dumps(change))
            if outcome >= 0:
                self.store.rated(table_id)
                return outcome == 1

    def change(self, table_id: str) -> dict[int, tuple[float, float]]:
        """A settled table's rating change per player seat: (mu before, mu after); empty
        for an unrated table, one not settled yet, or one whose record left Redis."""
        raw = self.redis.hget(table_key(table_id), CHANGE_FIELD)
        return {int(s): (b, a) for s, (b, a) in orjson.loads(raw).items()} if raw else {}

    def settle_pending(self) -> int:
        return sum(self.settle(table_id) for table_id in self.store.to_rate())


def _parse(raw: bytes | None) -> tuple[float, float]:
    if raw is None:
        return DEFAULT
    mu, sigma = raw.split()
    return float(mu), float(sigma)
