"""Live tables in Redis: the key layout, the table record, and every write as one atomic step.

Redis is the only store (architecture decision 6), so any number of gateway processes and
table workers share it. Every write that must not be seen half-done is a Lua script or a
MULTI/EXEC transaction: a move writes the state, bumps the version, appends to the event log
and the action list, and moves the seat deadlines in one script, so a process that dies
mid-request leaves either the old table or the new one, never a mix. The script also refuses
a move made at an old version; that is the compare-and-set that turns a lost race into 409.

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

import hashlib
import hmac
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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


def hash_token(token: str) -> str:
    """Only this is stored: a leaked Redis dump does not hand out seats."""
    return hashlib.sha256(token.encode()).hexdigest()


# Recomputes the seat deadlines of one table from its hash. Shared by every script that can
# change who must act or how long they may take, so the rule lives in one place: a seat
# keeps a deadline it already has (an out-of-turn answer is not given more time because
# someone else moved), except the seat named by `reset`, whose decision just changed (-1:
# every seat). Bots get a short safety-net deadline, away seats a short one, humans the
# table's decision time. The zset holds the earliest, so one range query finds due tables.
_SCHEDULE = """
local function schedule(tkey, dkey, tid, now, bot_s, away_s, reset)
  local f = redis.call('HMGET', tkey, 'to_act', 'status', 'players', 'decision_seconds')
  local acting = {}
  if f[2] == 'playing' then
    for _, s in ipairs(cjson.decode(f[1])) do acting[s] = true end
  end
  local earliest = nil
  for s = 0, tonumber(f[3]) - 1 do
    local key = 'deadline:' .. s
    if not acting[s] then
      redis.call('HDEL', tkey, key)
    else
      local raw = redis.call('HGET', tkey, key)
      local at = nil
      if raw then at = tonumber(raw) end
      if at == nil or reset == -1 or reset == s then
        local wait = tonumber(f[4])
        if redis.call('HGET', tkey, 'kind:' .. s) == 'bot' then
          wait = bot_s
        elseif redis.call('HEXISTS', tkey, 'away:' .. s) == 1 then
          -- Away shortens the wait; it never lengthens a table's own shorter time.
          wait = math.min(away_s, wait)
        end
        at = now + wait
        redis.call('HSET', tkey, key, string.format('%.3f', at))
      end
      if earliest == nil or at < earliest then earliest = at end
    end
  end
  if earliest == nil then
    redis.call('ZREM', dkey, tid)
  else
    redis.call('ZADD', dkey, string.format('%.3f', earliest), tid)
  end
end
"""

# KEYS: table, log, actions, deadlines, live, ratings-pending, finished
# ARGV: id, expected version, now, bot_s, away_s, actor, mark_away, state, to_act, terminal,
#       action json, update message, ttl, n events, events..., field, value, ...
_COMMIT = (
    _SCHEDULE
    + """
local version = redis.call('HGET', KEYS[1], 'version')
if not version then return {-1, 0} end
if redis.call('HGET', KEYS[1], 'status') ~= 'playing' then return {-2, tonumber(version)} end
if version ~= ARGV[2] then return {0, tonumber(version)} end
local new_version = tonumber(version) + 1
redis.call('HSET', KEYS[1], 'version', new_version, 'state', ARGV[8], 'to_act', ARGV[9])
local n = tonumber(ARGV[14])
for i = 1, n do redis.call('RPUSH', KEYS[2], ARGV[14 + i]) end
for i = 15 + n, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('RPUSH', KEYS[3], ARGV[11])
local actor = tonumber(ARGV[6])
if ARGV[7] == '1' then
  redis.call('HSET', KEYS[1], 'away:' .. actor, '1')
else
  redis.call('HDEL', KEYS[1], 'away:' .. actor)
end
if ARGV[10] == '1' then
  redis.call('HSET', KEYS[1], 'status', 'finished')
  redis.call('SREM', KEYS[5], ARGV[1])
  if redis.call('HGET', KEYS[1], 'rated') == '1' then redis.call('SADD', KEYS[6], ARGV[1]) end
  redis.call('ZADD', KEYS[7], tonumber(ARGV[3]), ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[7], 0, -501)  -- keeps the newest FINISHED_KEEP
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], tonumber(ARGV[13])) end
end
schedule(KEYS[1], KEYS[4], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), actor)
redis.call('PUBLISH', KEYS[1] .. ':updates', ARGV[12])
return {1, new_version}
"""
)

# KEYS: table, deadlines, open, live, log
# ARGV: id, seat, token hash, player, now, bot_s, away_s, log entry, player id ('' none)
_CLAIM = (
    _SCHEDULE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'status') ~= 'waiting' then return -2 end
local seat = ARGV[2]
if redis.call('HGET', KEYS[1], 'kind:' .. seat) ~= 'human' then return -3 end
if redis.call('HEXISTS', KEYS[1], 'token:' .. seat) == 1 then return -4 end
local n = tonumber(redis.call('HGET', KEYS[1], 'players'))
if ARGV[9] ~= '' and redis.call('HGET', KEYS[1], 'rated') == '1' then
  for s = 0, n - 1 do
    if redis.call('HGET', KEYS[1], 'pid:' .. s) == ARGV[9] then return -5 end
  end
end
redis.call('HSET', KEYS[1], 'token:' .. seat, ARGV[3], 'player:' .. seat, ARGV[4])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'pid:' .. seat, ARGV[9]) end
redis.call('RPUSH', KEYS[5], ARGV[8])
local started = 1
for s = 0, tonumber(redis.call('HGET', KEYS[1], 'players')) - 1 do
  if redis.call('HGET', KEYS[1], 'kind:' .. s) == 'human' and redis.call('HEXISTS', KEYS[1], 'token:' .. s) == 0 then
    started = 0
  end
end
if started == 1 then
  redis.call('HSET', KEYS[1], 'status', 'playing')
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[5])
  redis.call('SREM', KEYS[3], ARGV[1])
  redis.call('SADD', KEYS[4], ARGV[1])
  schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), -1)
end
redis.call('PUBLISH', KEYS[1] .. ':updates', '{"seats":true}')
return 1 + started
"""
)

# KEYS: table, deadlines, log
# ARGV: id, seat, token hash, now, bot_s, away_s, log entry
_LEAVE = (
    _SCHEDULE
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local seat = ARGV[2]
if redis.call('HGET', KEYS[1], 'token:' .. seat) ~= ARGV[3] then return -4 end
local status = redis.call('HGET', KEYS[1], 'status')
redis.call('HDEL', KEYS[1], 'token:' .. seat)
redis.call('RPUSH', KEYS[3], ARGV[7])
redis.call('PUBLISH', KEYS[1] .. ':updates', '{"seats":true}')
if status == 'waiting' then
  redis.call('HDEL', KEYS[1], 'player:' .. seat, 'pid:' .. seat)
  return 1
end
redis.call('HSET', KEYS[1], 'kind:' .. seat, 'bot', 'left:' .. seat, '1')
schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(seat))
return 2
"""
)

# KEYS: table, deadlines
# ARGV: id, seat, now, bot_s, away_s
_PRESENT = (
    _SCHEDULE
    + """
if redis.call('HDEL', KEYS[1], 'away:' .. ARGV[2]) == 1 then
  schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[2]))
end
return 1
"""
)

# KEYS: table, deadlines    ARGV: id, now, bot_s, away_s
_RESCHEDULE = (
    _SCHEDULE
    + """
schedule(KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), -1)
return 1
"""
)


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


class _Wire:
    """The two commands every move makes (read the table, commit the move), sent straight
    through redis-py's `Connection`.

    `Redis.execute_command` wraps each command in pool bookkeeping (a shared lock, a poll
    of the socket, observability hooks) and a retry closure; on the gateway's hot path that
    cost more CPU than the command itself. Here a command borrows an idle connection from a
    plain list and gives it back: `pop` and `append` need no lock, between threads or
    between gevent's greenlets alike, and the list never holds more connections than
    commands were ever in flight at once. The command, its encoding and its reply are the
    same; anything unusual (a connection error, a script Redis has not loaded) is handed
    to the full client path, which retries and reports exactly as before.
    """

    # Bumped in a forked child, so it never uses a connection (a socket) of its parent.
    _generation = 0

    def __init__(self, client: redis.Redis) -> None:
        self.pool = client.connection_pool
        self.idle: list[Any] = []
        self.generation = _Wire._generation

    @classmethod
    def _after_fork(cls) -> None:
        cls._generation += 1

    def _borrow(self) -> Any:
        if self.generation != _Wire._generation:
            self.idle, self.generation = [], _Wire._generation
        try:
            return self.idle.pop()
        except IndexError:
            return self.pool.connection_class(**self.pool.connection_kwargs)

    def close(self) -> None:
        idle, self.idle = self.idle, []
        for conn in idle:
            conn.disconnect()

    def call(self, *args: Any) -> Any:
        """The raw reply, or raises: ResponseError as Redis said it, anything else after
        dropping the connection (the next call opens another)."""
        conn = self._borrow()
        try:
            conn.send_command(*args)
            reply = conn.read_response()
        except redis.ResponseError:
            self.idle.append(conn)
            raise
        except BaseException:
            conn.disconnect()
            raise
        self.idle.append(conn)
        return reply


os.register_at_fork(after_in_child=_Wire._after_fork)


class TableStore:
    def __init__(self, client: redis.Redis, timing: Timing, finished_ttl: int) -> None:
        self.redis = client
        self.timing = timing
        self.finished_ttl = finished_ttl
        self._wire = _Wire(client)
        self._commit = client.register_script(_COMMIT)
        self._claim = client.register_script(_CLAIM)
        self._leave = client.register_script(_LEAVE)
        self._present = client.register_script(_PRESENT)
        self._reschedule = client.register_script(_RESCHEDULE)

    def close(self) -> None:
        self._wire.close()

    # -- reading -------------------------------------------------------------------------
    def load(self, table_id: str) -> Table | None:
        key = table_key(table_id)
        try:
            reply = self._wire.call("HGETALL", key)
        except (redis.ConnectionError, redis.TimeoutError):
            raw = self.redis.hgetall(key)  # the client's own retries
        else:
            # RESP2 answers a flat [field, value, ...] list, RESP3 a map.
            raw = reply if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2], strict=True))
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

    def log(self, table_id: str, start: int = 0) -> list[dict[str, Any]]:
        return [orjson.loads(line) for line in self.redis.lrange(log_key(table_id), start, -1)]

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
            pipe.rpush(log_key(table_id), orjson.dumps(log_entry))
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
            len(events), *(orjson.dumps({**e, "version": new_version}) for e in events), *fields,
        ]  # fmt: skip
        keys = [
            table_key(table.id), log_key(table.id), actions_key(table.id),
            DEADLINES, LIVE_TABLES, RATINGS_PENDING, FINISHED_TABLES,
        ]  # fmt: skip
        try:
            outcome, version = self._wire.call("EVALSHA", self._commit.sha, len(keys), *keys, *args)
        except (redis.ConnectionError, redis.TimeoutError, redis.exceptions.NoScriptError):
            # Loads the script if Redis lost it (a restart), and retries like any command.
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
        entry = {"kind": "joined", "seat": seat, "text": f"{player or 'a player'} took seat {seat}"}
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
        }
        args = [
            table.id, seat, token_hash, now, self.timing.bot_seconds, self.timing.away_seconds,
            orjson.dumps(entry),
        ]  # fmt: skip
        return int(self._leave(keys=[table_key(table.id), DEADLINES, log_key(table.id)], args=args))

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
