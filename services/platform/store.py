"""Live tables in Redis: the key layout, the table record, and every write as one atomic step.

Redis is the only store (architecture decision 6), so any number of gateway processes and
table workers share it. Every write that must not be seen half-done is a Lua script or a
MULTI/EXEC transaction: a move writes the state, bumps the version, appends to the event log
and the action list, and moves the seat deadlines in one script, so a process that dies
mid-request leaves either the old table or the new one, never a mix. The script also refuses
a move made at an old version; that is the compare-and-set that turns a lost race into 409.
The scripts are the `.lua` files in lua/ beside this module, each a redis-py Script on the
client's own connection pool (so its limits and health checks apply to every command).

Layout (`{id}` is a table id; every key of one table shares its prefix):

    gw:table:{id}          hash   the record: game, players, seed, config, status, version,
                                  state (engine bytes), to_act, and per seat i: kind:i
                                  (human|bot), bot:i, player:i, token:i (sha256 of the seat
                                  token), away:i, deadline:i (unix seconds), legal:i (the
                                  seat's legal actions at this version, JSON; empty: ask View),
                                  pid:i (the player id a seat is bound to), left:i (its
                                  player left during play); seed_source
    gw:table:{id}:log      list   public event log, JSON lines with the version they belong to
    gw:table:{id}:actions  list   [seat, action] pairs: the replay record's action list
    gw:table:{id}:updates  pubsub a nudge after every change, fanned out to event streams
    gw:deadlines           zset   table id -> earliest deadline among the seats to act
    gw:tables:open         set    tables waiting for players
    gw:tables:live         set    tables being played
    gw:ratings:{game}      hash   player -> "mu sigma"
    gw:ratings:pending     set    finished rated tables whose ratings are not yet updated
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import redis

from .keys import LIVE_TABLES, OPEN_TABLES

DEADLINES = "gw:deadlines"
RATINGS_PENDING = "gw:ratings:pending"
FINISHED_TABLES = "gw:tables:finished"  # zset: id -> finished_at, the Replays page's list
FINISHED_KEEP = 500


def table_key(table_id: str) -> str:
    return f"gw:table:{table_id}"


def log_key(table_id: str) -> str:
    return f"gw:table:{table_id}:log"


def actions_key(table_id: str) -> str:
    return f"gw:table:{table_id}:actions"


def updates_channel(table_id: str) -> str:
    return f"gw:table:{table_id}:updates"


LUA = Path(__file__).with_name("lua")


@functools.cache
def lua_script(name: str) -> str:
    """A script of lua/, after schedule.lua's shared `schedule` function (the rule for seat
    deadlines, which every script that changes who must act calls)."""
    return (LUA / "schedule.lua").read_text() + "\n" + (LUA / f"{name}.lua").read_text()


def hash_token(token: str) -> str:
    """Only this is stored: a leaked Redis dump does not hand out seats."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Seat:
    index: int
    kind: str  # "human" or "bot" (a human seat whose player left becomes "bot")
    bot: str  # the bot that plays it, or acts for its player past a deadline
    player: str | None
    token_hash: str | None
    away: bool
    deadline: float | None
    # Its legal actions at this version as `/legal` sends them (JSON); never in public().
    legal: bytes | None = None
    # The signed-in player the seat is bound to (players.py), None for an anonymous seat.
    player_id: str | None = None
    # Its player left during play (a rated game: counts as a loss).
    left: bool = False

    @property
    def claimed(self) -> bool:
        return self.token_hash is not None

    def public(self) -> dict[str, Any]:
        return {
            "seat": self.index,
            "kind": self.kind,
            # A bot is named only where one plays the seat now; `stand_in` is who acts for
            # a human seat past its deadline.
            "bot": self.bot if self.kind == "bot" else None,
            "stand_in": self.bot,
            "player": self.player,
            "player_id": self.player_id,
            "claimed": self.claimed,
            "away": self.away,
            "deadline": self.deadline,
        }


@dataclass
class Table:
    id: str
    game: str
    players: int
    seed: int
    config: dict[str, Any]
    rated: bool
    source: str
    decision_seconds: float
    created: float
    status: str  # waiting | playing | finished
    version: int
    state: bytes
    to_act: list[int]
    winners: list[int]
    returns: list[float]
    turn: int
    decisions: int
    seats: list[Seat] = field(default_factory=list)
    # Where the deal's seed came from: "server", "chosen" (by the opener, only where at
    # most one human sits) or "mixed" (chosen, then mixed with a server secret); shown to
    # everyone who looks, so nobody joins a table unaware (see tables.table_seed).
    seed_source: str = "server"
    # Once finished: each seat's final score and what made it (store.final_scores).
    scores: list[dict[str, Any]] = field(default_factory=list)

    def seat_for_token(self, token: str) -> int | None:
        digest = hash_token(token)
        for seat in self.seats:
            if seat.token_hash is not None and hmac.compare_digest(seat.token_hash, digest):
                return seat.index
        return None

    def summary(self) -> dict[str, Any]:
        return {
            "table": self.id,
            "game": self.game,
            "players": self.players,
            "config": self.config,
            "rated": self.rated,
            "source": self.source,
            "decision_seconds": self.decision_seconds,
            "created": self.created,
            "status": self.status,
            "version": self.version,
            "to_act": self.to_act,
            "winners": self.winners,
            "turn": self.turn,
            "decisions": self.decisions,
            "seed_source": self.seed_source,
            "seats": [s.public() for s in self.seats],
            # Once over: the engine's returns (the scores ratings rank by) and where the
            # replay is, so a client needs no second request to close the game.
            **(
                {
                    "returns": self.returns,
                    "scores": self.scores,
                    "replay": f"/api/tables/{self.id}/replay",
                    "replay_page": f"/replay?table={self.id}",
                }
                if self.status == "finished"
                else {}
            ),
        }


def final_scores(step: Any) -> list[dict[str, Any]]:
    """A terminal Step's score breakdown as clients see it: per seat, the game's total
    and its named parts (empty from an engine that predates Step.scores)."""
    return [
        {"seat": s.seat, "total": s.total, "parts": {p.name: p.value for p in s.parts}} for s in step.scores
    ]


def _seat_keys(i: int) -> tuple[bytes, ...]:
    return tuple(
        f"{name}:{i}".encode()
        for name in ("kind", "bot", "player", "token", "away", "deadline", "legal", "pid", "left")
    )


# Every request reads its table, so the per-seat field names are encoded once, not per read.
_SEAT_KEYS = [_seat_keys(i) for i in range(16)]


def _parse_table(table_id: str, raw: dict[bytes, bytes]) -> Table:
    get = raw.get
    players = int(raw[b"players"])
    seats = []
    for i in range(players):
        kind, bot, player, token, away, deadline, actions, pid, left = (
            _SEAT_KEYS[i] if i < len(_SEAT_KEYS) else _seat_keys(i)
        )
        owner = get(pid)
        name = get(player)
        token_hash = get(token)
        at = get(deadline)
        seats.append(
            Seat(
                index=i,
                kind=get(kind, b"").decode(),
                bot=get(bot, b"").decode(),
                player=name.decode() or None if name is not None else None,
                token_hash=token_hash.decode() or None if token_hash is not None else None,
                away=away in raw,
                deadline=float(at) if at else None,
                legal=get(actions),
                player_id=owner.decode() if owner else None,
                left=left in raw,
            )
        )
    return Table(
        id=table_id,
        game=get(b"game", b"").decode(),
        players=players,
        seed=int(raw[b"seed"]),
        config=orjson.loads(raw[b"config"]),
        rated=get(b"rated") == b"1",
        source=get(b"source", b"").decode(),
        decision_seconds=float(raw[b"decision_seconds"]),
        created=float(raw[b"created"]),
        status=get(b"status", b"").decode(),
        version=int(raw[b"version"]),
        state=raw[b"state"],
        to_act=orjson.loads(raw[b"to_act"]),
        winners=orjson.loads(get(b"winners", b"[]")),
        returns=orjson.loads(get(b"returns", b"[]")),
        turn=int(get(b"turn") or 0),
        decisions=int(get(b"decisions") or 0),
        seats=seats,
        seed_source=get(b"seed_source", b"server").decode(),
        scores=orjson.loads(get(b"scores", b"[]")),
    )


@dataclass
class Timing:
    """How long seats may take, passed to every script that reschedules deadlines."""

    bot_seconds: float
    away_seconds: float


class TableStore:
    def __init__(self, client: redis.Redis, timing: Timing, finished_ttl: int) -> None:
        self.redis = client
        self.timing = timing
        self.finished_ttl = finished_ttl
        self._commit = client.register_script(lua_script("commit"))
        self._claim = client.register_script(lua_script("claim"))
        self._leave = client.register_script(lua_script("leave"))
        self._present = client.register_script(lua_script("present"))
        self._reschedule = client.register_script(lua_script("reschedule"))
        self._reissue = client.register_script(lua_script("reissue"))

    def close(self) -> None:
        """Nothing of its own to close: every command goes through the client's pool."""

    # -- reading -------------------------------------------------------------------------
    def load(self, table_id: str) -> Table | None:
        raw = self.redis.hgetall(table_key(table_id))
        return _parse_table(table_id, raw) if raw else None

    def tables(self, status: str, limit: int) -> list[Table]:
        ids = sorted(
            m.decode() for m in self.redis.smembers(OPEN_TABLES if status == "waiting" else LIVE_TABLES)
        )
        found: list[Table] = []
        while ids and len(found) < limit:
            batch, ids = ids[: limit - len(found)], ids[limit - len(found) :]
            with self.redis.pipeline(transaction=False) as pipe:
                for table_id in batch:
                    pipe.hgetall(table_key(table_id))
                raws = pipe.execute()
            found += [_parse_table(i, raw) for i, raw in zip(batch, raws, strict=True) if raw]
            gone = [i for i, raw in zip(batch, raws, strict=True) if not raw]
            if gone:  # waiting tables that expired: their ids leave the index too
                self.redis.srem(OPEN_TABLES if status == "waiting" else LIVE_TABLES, *gone)
        return found

    def prune_open(self) -> int:
        """Drop the ids of expired waiting tables from the open index; how many went."""
        ids = [m.decode() for m in self.redis.smembers(OPEN_TABLES)]
        with self.redis.pipeline(transaction=False) as pipe:
            for table_id in ids:
                pipe.exists(table_key(table_id))
            alive = pipe.execute()
        gone = [i for i, here in zip(ids, alive, strict=True) if not here]
        if gone:
            self.redis.srem(OPEN_TABLES, *gone)
        return len(gone)

    def log(self, table_id: str, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """The log from position `start`: all of it, or at most `count` entries."""
        end = -1 if count is None else start + count - 1
        return [orjson.loads(line) for line in self.redis.lrange(log_key(table_id), start, end)]

    def finished(self, limit: int, offset: int = 0) -> list[tuple[Table, float]]:
        """Recently finished tables with the time each ended, newest first; those already
        expired are dropped from the list."""
        found = self.redis.zrevrange(FINISHED_TABLES, offset, offset + limit - 1, withscores=True)
        ids = [m.decode() for m, _ in found]
        ended = {m.decode(): score for m, score in found}
        with self.redis.pipeline(transaction=False) as pipe:
            for table_id in ids:
                pipe.hgetall(table_key(table_id))
            raws = pipe.execute()
        gone = [i for i, raw in zip(ids, raws, strict=True) if not raw]
        if gone:
            self.redis.zrem(FINISHED_TABLES, *gone)
        return [(_parse_table(i, raw), ended[i]) for i, raw in zip(ids, raws, strict=True) if raw]

    def log_tail(self, table_id: str, count: int) -> list[dict[str, Any]]:
        """The newest `count` log entries (a page's last-trick line needs only those)."""
        return [orjson.loads(line) for line in self.redis.lrange(log_key(table_id), -count, -1)]

    def actions(self, table_id: str) -> list[list[int]]:
        return [orjson.loads(line) for line in self.redis.lrange(actions_key(table_id), 0, -1)]

    def due_tables(self, now: float, limit: int = 500) -> list[str]:
        return [m.decode() for m in self.redis.zrangebyscore(DEADLINES, "-inf", now, start=0, num=limit)]

    def postpone(self, table_id: str, until: float) -> None:
        """Push a table whose due move failed (engine down) back, so it does not spin."""
        self.redis.zadd(DEADLINES, {table_id: until}, xx=True)

    def forget_deadline(self, table_id: str) -> None:
        self.redis.zrem(DEADLINES, table_id)

    # -- writing -------------------------------------------------------------------------
    def create(
        self,
        table_id: str,
        record: dict[str, str | bytes | int | float],
        log_entry: dict[str, Any],
        now: float,
        watch: Iterable[str] = (),
        check: Callable[[redis.client.Pipeline], bool] | None = None,
        also: Callable[[redis.client.Pipeline], None] | None = None,
        expire: int | None = None,
    ) -> bool:
        """Write a new table in one transaction, with `also`'s writes (e.g. matched
        tickets) when `check` still holds over the `watch`ed keys; False if it no longer did.
        `expire`: seconds a waiting table lives unless it starts (the claim that starts it
        makes its keys persistent).
        """
        key = table_key(table_id)
        with self.redis.pipeline() as pipe:
            watched = list(watch)
            if watched:
                pipe.watch(*watched)
                if check is not None and not check(pipe):
                    pipe.reset()
                    return False
            pipe.multi()
            pipe.hset(key, mapping=record)
            pipe.sadd(OPEN_TABLES if record["status"] == "waiting" else LIVE_TABLES, table_id)
            pipe.rpush(log_key(table_id), orjson.dumps({**log_entry, "at": now}))
            if expire is not None:
                pipe.expire(key, expire)
                pipe.expire(log_key(table_id), expire)
            if also is not None:
                also(pipe)
            self._reschedule(
                keys=[key, DEADLINES],
                args=[table_id, now, self.timing.bot_seconds, self.timing.away_seconds],
                client=pipe,
            )
            try:
                pipe.execute()
            except redis.WatchError:
                return False
        return True

    def commit(
        self,
        table: Table,
        actor: int,
        action: int,
        step: Any,
        events: list[dict[str, Any]],
        legal: list[bytes],
        now: float,
        mark_away: bool = False,
    ) -> tuple[int, int]:
        """Apply an engine Step at `table.version`, with each seat's legal actions at it
        (`legal`, as stored in legal:i). Returns (outcome, version): outcome 1
        committed (version is the new one), 0 stale (the current version), -1 no table,
        -2 not being played."""
        new_version = table.version + 1
        to_act = list(step.to_act)
        status = "finished" if step.terminal else "playing"
        update = {"version": new_version, "to_act": to_act, "status": status}
        fields: list[Any] = [
            "turn", step.turn, "decisions", step.decisions,
            "winners", orjson.dumps(list(step.winners)), "returns", orjson.dumps(list(step.returns)),
        ]  # fmt: skip
        for i, actions in enumerate(legal):
            fields += [f"legal:{i}", actions]
        if step.terminal:
            fields += ["finished_at", now, "scores", orjson.dumps(final_scores(step))]
        args: list[Any] = [
            table.id, table.version, now, self.timing.bot_seconds, self.timing.away_seconds,
            actor, int(mark_away), step.state, orjson.dumps(to_act), int(step.terminal),
            orjson.dumps([actor, action]), orjson.dumps(update), self.finished_ttl,
            len(events), *(orjson.dumps({**e, "version": new_version, "at": now}) for e in events), *fields,
        ]  # fmt: skip
        keys = [
            table_key(table.id), log_key(table.id), actions_key(table.id),
            DEADLINES, LIVE_TABLES, RATINGS_PENDING, FINISHED_TABLES,
        ]  # fmt: skip
        # redis-py's Script loads the script again if Redis lost it (a restart).
        outcome, version = self._commit(keys=keys, args=args)
        return int(outcome), int(version)

    def claim(
        self,
        table: Table,
        seat: int,
        token_hash: str,
        player: str | None,
        now: float,
        player_id: str | None = None,
    ) -> int:
        """Take a human seat while the table waits. 2: the table started; 1: claimed;
        -1 no table, -2 not waiting, -3 not a human seat, -4 already taken, -5 the player
        holds another seat of this rated table."""
        entry = {
            "kind": "joined", "seat": seat, "text": f"{player or 'a player'} took seat {seat}", "at": now,
            "payload": {"player": player, "player_id": player_id},
        }  # fmt: skip
        args = [
            table.id, seat, token_hash, player or "", now, self.timing.bot_seconds,
            self.timing.away_seconds, orjson.dumps({**entry, "version": table.version}), player_id or "",
        ]  # fmt: skip
        keys = [table_key(table.id), DEADLINES, OPEN_TABLES, LIVE_TABLES, log_key(table.id)]
        return int(self._claim(keys=keys, args=args))

    def leave(self, table: Table, seat: int, token_hash: str, now: float) -> int:
        """Give up a seat: before the start it is free again (1); during play its bot
        takes over for good and the seat is marked `left` (2). -4: the token no longer
        holds the seat."""
        entry = {
            "kind": "left",
            "seat": seat,
            "text": f"seat {seat} left the table",
            "version": table.version,
            "at": now,
            "payload": {},
        }
        args = [
            table.id, seat, token_hash, now, self.timing.bot_seconds, self.timing.away_seconds,
            orjson.dumps(entry),
        ]  # fmt: skip
        return int(self._leave(keys=[table_key(table.id), DEADLINES, log_key(table.id)], args=args))

    def reissue(self, table_id: str, seat: int, player_id: str, token_hash: str) -> int:
        """A new token for a seat bound to `player_id` (the old one stops working): 1, or
        -1 no table, -2 finished, -3 not that player's seat, -4 its player left."""
        return int(self._reissue(keys=[table_key(table_id)], args=[seat, player_id, token_hash]))

    def reschedule(self, table_id: str, now: float) -> None:
        """Recompute every seat deadline of a table from its record (as if each seat's
        decision had just changed)."""
        self._reschedule(
            keys=[table_key(table_id), DEADLINES],
            args=[table_id, now, self.timing.bot_seconds, self.timing.away_seconds],
        )

    def mark_present(self, table_id: str, seat: int, now: float) -> None:
        """A seat that timed out is back: its decisions get the full time again."""
        self._present(
            keys=[table_key(table_id), DEADLINES],
            args=[table_id, seat, now, self.timing.bot_seconds, self.timing.away_seconds],
        )
