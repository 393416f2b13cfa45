"""Live tables in Redis: the table record, every write as one atomic step, and the indexes.

Redis is the only store (architecture decision 6), so any number of gateway processes and
table workers share it, on one Redis or a Redis Cluster alike (keys.py: every key of a
table shares its hash tag). Every change to a table is one Lua script in the table's own
slot: a move checks the version (the compare-and-set that turns a lost race into 409),
writes the state, its log lines and its action, and moves the seats' deadlines, so a
process that dies mid-request leaves either the old table or the new one, never a mix.
The scripts are the `.lua` files in lua/ beside this module, each a redis-py Script on the
client's own connection pool.

The indexes (which tables wait, are played, are due, have finished) are per shard
(keys.INDEX_SHARDS), each shard's keys in one slot, a table's shard fixed by its id. A
table and its index entry are two writes in two slots, ordered so that a crash between
them is repaired by `reconcile` (beat, every few seconds) rather than lost:

- a new table is listed in its shard first, then written: a crash leaves an index entry
  without a table, which the reconciler drops once it is older than a creation takes;
- a change is written to the table first, then filed in the index (its earliest deadline
  is also kept in the record, field `due`): the reconciler walks each shard's live tables
  and refiles any whose index entry is missing or later than its record. So a live table
  is never left without its deadline for longer than one reconciling pass. A deadline
  score may be earlier than the record's `due` (a move that puts the deadline off files
  nothing: _file_moved_deadline); the deadline beat lifts such a score when it passes.

The record (`gw:{t:<id>}`): game, players, seed, config, status, version, state (engine
bytes), to_act, due, and per seat i: kind:i (human|bot), bot:i, player:i, token:i (sha256
of the seat token), away:i ('1' or empty), deadline:i (unix seconds or empty), legal:i
(the seat's legal actions at this version, JSON, packed past a few actions; empty: ask View), pid:i (the player id a
seat is bound to), left:i (its player left during play), tries:i (moves the seat sent at
this decision, move_limits.py); seed_source; deal_key (hex, the deal's ChaCha20 key:
server-side, in the replay record once finished); acts (the moves, packing.py; a table
from before it has the `:actions` list instead); logz (the log's blocks of lines sealed in
`:logz`'s chunks, before `:log`'s lines: packing.LOG_BLOCK); logf ('1': those blocks are in
the table's file under the archive's folder instead, log_blocks.py); moved_at (when the version last moved);
seats_v (bumped by each change to a seat's kind, away flag or deadline outside a move:
the commit checks it, seat_deadlines.py);
once finished, finished_at and scores. The state and the log lines are packed (packing.py).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import heapq
import hmac
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from services.runtime.redis_types import RedisClient

from .archive import TableArchive
from .keys import (
    INDEX_SHARDS,
    actions_key,
    index_key,
    log_chunks_key,
    log_key,
    shard_of,
    table_key,
    updates_channel,
)
from .packing import (
    ACTS_MARK,
    CHUNK_BLOCKS,
    CHUNK_LINES,
    LOG_BLOCK,
    pack_action,
    pack_legal,
    pack_log_chunk,
    pack_log_line,
    pack_state,
    unpack_actions,
    unpack_log,
    unpack_state,
)
from .seat_deadlines import schedule

# A status's index (the lobby lists and the counts read these).
# Commits tried again when only `seats_v` moved (a seat came back, left...) before one
# gives up as stale: each such change is a person's action, never a loop.
_SEAT_RETRIES = 5

STATUS_INDEX = {"waiting": "open", "playing": "live", "finished": "finished"}

LUA = Path(__file__).with_name("lua")


@functools.cache
def lua_source(name: str) -> str:
    """A script of lua/ as it is."""
    return (LUA / f"{name}.lua").read_text()


@functools.cache
def lua_script(name: str) -> str:
    """A table script of lua/, after schedule.lua's shared functions (the rule for seat
    deadlines, which every script that changes who must act calls)."""
    return lua_source("schedule") + "\n" + lua_source(name)


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
    # Its legal actions at this version as `/legal` sends them (JSON, zlib past a few
    # actions: packing.unpack_legal gives the JSON); never in public().
    legal: bytes | None = None
    # The signed-in player the seat is bound to (players.py), None for an anonymous seat.
    player_id: str | None = None
    # Its player left during play (a rated game: counts as a loss).
    left: bool = False
    # Moves it sent at this decision (tries:i, reset by each commit) and when their window
    # began (tries_at:i, set when a window ran out; move_limits.py).
    tries: int = 0
    tries_at: float | None = None

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
    # Once finished: each seat's final score and what made it (store.final_scores), and when.
    scores: list[dict[str, Any]] = field(default_factory=list)
    finished_at: float | None = None
    # The ChaCha20 key the deal is drawn from (platform/deal.py); None: the seeded
    # generator (a chosen seed, or a table from before keyed deals). Never in `summary`:
    # it tells every card to come, so only the finished table's replay record holds it.
    deal_key: bytes | None = None
    # When its version last moved (the commit's time; None before the first move).
    moved_at: float | None = None
    # Bumped by every change to a seat's kind, away flag or deadline outside a move
    # (lua/present, leave, reschedule): the commit checks it with the version
    # (seat_deadlines.py). '' until the first such change.
    seats_v: str = ""
    # Its earliest seat deadline as the record keeps it ('' none): where its index entry is.
    due: str = ""
    # Its `acts` field is packed (packing.ACTS_MARK; False: text, a table opened before).
    acts_binary: bool = False

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
        for name in (
            "kind",
            "bot",
            "player",
            "token",
            "away",
            "deadline",
            "legal",
            "pid",
            "left",
            "tries",
            "tries_at",
        )
    )


# Every request reads its table, so the per-seat field names are encoded once, not per read.
_SEAT_KEYS = [_seat_keys(i) for i in range(16)]


def _parse_table(table_id: str, raw: dict[bytes, bytes]) -> Table:
    get = raw.get
    players = int(raw[b"players"])
    seats = []
    for i in range(players):
        kind, bot, player, token, away, deadline, actions, pid, left, tries, tries_at = (
            _SEAT_KEYS[i] if i < len(_SEAT_KEYS) else _seat_keys(i)
        )
        owner = get(pid)
        name = get(player)
        token_hash = get(token)
        at = get(deadline)
        began = get(tries_at)
        seats.append(
            Seat(
                index=i,
                kind=get(kind, b"").decode(),
                bot=get(bot, b"").decode(),
                player=name.decode() or None if name is not None else None,
                token_hash=token_hash.decode() or None if token_hash is not None else None,
                away=get(away) == b"1",
                deadline=float(at) if at else None,
                legal=get(actions),
                player_id=owner.decode() if owner else None,
                left=left in raw,
                tries=int(get(tries) or 0),
                tries_at=float(began) if began else None,
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
        state=unpack_state(raw[b"state"]),
        to_act=orjson.loads(raw[b"to_act"]),
        winners=orjson.loads(get(b"winners", b"[]")),
        returns=orjson.loads(get(b"returns", b"[]")),
        turn=int(get(b"turn") or 0),
        decisions=int(get(b"decisions") or 0),
        seats=seats,
        seed_source=get(b"seed_source", b"server").decode(),
        scores=orjson.loads(get(b"scores", b"[]")),
        finished_at=float(raw[b"finished_at"]) if b"finished_at" in raw else None,
        deal_key=bytes.fromhex(raw[b"deal_key"].decode()) if b"deal_key" in raw else None,
        moved_at=float(raw[b"moved_at"]) if b"moved_at" in raw else None,
        seats_v=get(b"seats_v", b"").decode(),
        due=get(b"due", b"").decode(),
        acts_binary=get(b"acts", b"")[:1] == ACTS_MARK,
    )


@dataclass
class Timing:
    """How long seats may take, passed to every script that reschedules deadlines."""

    bot_seconds: float
    away_seconds: float


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class TableStore:
    def __init__(
        self,
        client: RedisClient,
        timing: Timing,
        finished_ttl: int,
        games: list[str],
        grace: float = 30.0,
        archive: TableArchive | None = None,
    ) -> None:
        self.redis = client
        # Where finished tables go after their grace period (archive.py); read from there
        # when Redis no longer has a table.
        self.archive = archive
        # Where a live table's sealed log blocks go, out of Redis (log_blocks.py): beside
        # the archive, which takes them with the rest of the table once it is over.
        self.blocks = archive.blocks if archive is not None else None
        self.timing = timing
        self.finished_ttl = finished_ttl
        # An index entry whose table does not exist is dropped only once older than this:
        # a creation lists the table first and writes it a moment later.
        self.grace = grace
        # The lists (open, live, finished) are per shard and game, so a lobby page of one
        # game reads that game's lists only.
        self.games = list(games)
        self._create = client.register_script(lua_script("create"))
        self._commit = client.register_script(lua_source("commit"))
        self._claim = client.register_script(lua_script("claim"))
        self._leave = client.register_script(lua_script("leave"))
        self._present = client.register_script(lua_script("present"))
        self._reschedule = client.register_script(lua_script("reschedule"))
        self._reissue = client.register_script(lua_source("reissue"))
        self._seal = client.register_script(lua_source("seal"))

    def close(self) -> None:
        """Nothing of its own to close: every command goes through the client's pool."""

    # -- reading -------------------------------------------------------------------------
    def load(self, table_id: str) -> Table | None:
        raw = self.redis.hgetall(table_key(table_id))
        if raw:
            return _parse_table(table_id, raw)
        archived = self._archived(table_id)
        return _parse_table(table_id, archived["record"]) if archived else None

    def _archived(self, table_id: str) -> dict[str, Any] | None:
        return self.archive.find(table_id) if self.archive is not None else None

    def load_many(self, ids: list[str]) -> list[Table | None]:
        with self.redis.pipeline(transaction=False) as pipe:
            for table_id in ids:
                pipe.hgetall(table_key(table_id))
            raws = pipe.execute()
        return [_parse_table(i, raw) if raw else None for i, raw in zip(ids, raws, strict=True)]

    def _lists(self, status: str, game: str | None) -> list[tuple[int, str]]:
        """(shard, key) of every list of `status` tables, of one game or all."""
        name = STATUS_INDEX[status]
        games = self.games if game is None else [game]
        return [(shard, index_key(shard, f"{name}:{g}")) for g in games for shard in range(INDEX_SHARDS)]

    def page(
        self,
        status: str,
        limit: int,
        cursor: str | None = None,
        game: str | None = None,
        before: str | None = None,
    ) -> TablePage:
        """Newest first, one page of the tables in `status` (of `game`, or every game)
        over every shard: the tables after `cursor` (the `next` of the page before), or
        those just before `before` (the `previous` of the page after), with how many
        there are in all. Each list gives at most a page, so the cost is the page's, not
        the platform's."""
        lists = self._lists(status, game)
        upward = before is not None
        mark = before if upward else cursor
        edge: float = float("-inf") if upward else float("inf")
        mark_id = ""
        if mark:
            score, _, mark_id = mark.partition(":")
            edge = float(score)
        old = time.time() - self.grace
        while True:
            with self.redis.pipeline(transaction=False) as pipe:
                for _shard, key in lists:
                    if upward:
                        pipe.zrangebyscore(key, edge, "+inf", 0, limit + 1, withscores=True)
                    else:
                        pipe.zrevrangebyscore(key, edge, "-inf", 0, limit + 1, withscores=True)
                    pipe.zcard(key)
                replies = pipe.execute()
            total = sum(replies[1::2])
            found = _nearest(
                [[(score, m.decode()) for m, score in reply] for reply in replies[0::2]],
                limit + 1, edge, mark_id if mark else None, upward,
            )  # fmt: skip
            # Nearest the mark first: going up, those are the page's oldest.
            window = found[:limit][::-1] if upward else found[:limit]
            loaded = self.load_many([table_id for _, table_id in window])
            tables: list[Table] = []
            gone: dict[int, list[str]] = {}
            for (listed, table_id), table in zip(window, loaded, strict=True):
                if table is None and status == "waiting" and listed < old:
                    gone.setdefault(shard_of(table_id), []).append(table_id)  # expired unstarted
                elif table is not None:
                    tables.append(table)
            if not gone:
                break
            for shard, key in lists:  # drop them, then read the page again
                ids = gone.get(shard)
                if ids:
                    self.redis.zrem(key, *ids)
        more = len(found) > limit  # beyond the page, away from the mark
        first = _cursor(window[0]) if window else None
        last = _cursor(window[-1]) if window else None
        if upward:
            # Below this page lies at least the table `before` names (the page it came from).
            return TablePage(tables, last or before, int(total), first if more else None)
        return TablePage(tables, last if more else None, int(total), (first or cursor) if cursor else None)

    def count(self, status: str, game: str | None = None) -> int:
        with self.redis.pipeline(transaction=False) as pipe:
            for _shard, key in self._lists(status, game):
                pipe.zcard(key)
            return int(sum(pipe.execute()))

    def finished(self, limit: int) -> list[tuple[Table, float]]:
        """Recently finished tables with the time each ended, newest first: those still in
        Redis, then the newest archived ones."""
        tables = self.page("finished", limit).tables
        found = [(t, float(t.finished_at or t.created)) for t in tables]
        if self.archive is not None and len(found) < limit:
            seen = {t.id for t, _ in found}
            found += [
                (_parse_table(table_id, record), ended)
                for table_id, record, ended in self.archive.recent(limit - len(found))
                if table_id not in seen
            ]
        return found

    def log(self, table_id: str, start: int = 0, count: int | None = None) -> list[dict[str, Any]]:
        """The log from position `start`: all of it, or at most `count` entries."""
        first = start // CHUNK_LINES  # the first chunk that may hold `start`
        with self.redis.pipeline(transaction=True) as pipe:  # chunks and lines as one
            pipe.hmget(table_key(table_id), ["logz", "logf"])
            pipe.lrange(log_chunks_key(table_id), first, -1)
            pipe.lrange(log_key(table_id), 0, -1)
            (blocks, in_file), packed, lines = pipe.execute()
        if blocks is None and not lines:  # no line in Redis (a live table has one): archived?
            return self._archived_log(table_id, start, count)
        sealed = int(blocks or 0) * LOG_BLOCK
        if in_file:  # the sealed blocks from the one holding `start` on are in the file
            block = min(start // LOG_BLOCK, int(blocks))
            packed = self._file_blocks(table_id, block, int(blocks))
            if packed is None:  # archived (its file with it) since Redis was read
                return self._archived_log(table_id, start, count)
            at = block * LOG_BLOCK
        else:  # lines from `at` on: those of the chunks read, then `:log`'s
            at = min(first * CHUNK_LINES, sealed)
        found = unpack_log(packed, lines)
        found = found[start - at :] if count is None else found[start - at : start - at + count]
        return [orjson.loads(line) for line in found]

    def _archived_log(self, table_id: str, start: int, count: int | None) -> list[dict[str, Any]]:
        archived = self._archived(table_id)
        log = archived["log"] if archived else []
        return log[start:] if count is None else log[start : start + count]

    def _file_blocks(self, table_id: str, first: int, end: int) -> list[bytes] | None:
        """Sealed blocks `first` to `end - 1` from the table's file; None if the table was
        archived since Redis was read (its file went with it). A file missing otherwise is
        a deployment whose gateways and tables workers do not share the data folder: said,
        never answered as an empty log."""
        if self.blocks is None:
            raise RuntimeError(
                f"table {table_id}'s sealed log is in a file and this store has no folder for one"
            )
        try:
            return self.blocks.read(table_id, first, end)
        except KeyError:
            if self._archived(table_id) is not None:
                return None
            raise RuntimeError(
                f"table {table_id}'s sealed log blocks {first}-{end - 1} are not in"
                f" {self.blocks.path(table_id)}: every gateway and tables worker must share the"
                " data folder (CULTISTS_DATA or CULTISTS_ARCHIVE_DIR)"
            ) from None

    def log_tail(self, table_id: str, count: int) -> list[dict[str, Any]]:
        """The newest `count` log entries (a page's last-trick line needs only those)."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.lrange(log_key(table_id), -count, -1)
            pipe.lrange(log_chunks_key(table_id), -(count // CHUNK_LINES + 1), -1)
            pipe.hmget(table_key(table_id), ["logz", "logf"])
            lines, packed, (blocks, in_file) = pipe.execute()
        if not lines and not packed and blocks is None:
            return self._archived_log(table_id, 0, None)[-count:]
        if len(lines) >= count:
            packed = []
        elif in_file:  # the blocks that make up what `:log` lacks, from the file
            end = int(blocks)
            wanted = -(-(count - len(lines)) // LOG_BLOCK)  # blocks, rounded up
            packed = self._file_blocks(table_id, max(0, end - wanted), end)
            if packed is None:
                return self._archived_log(table_id, 0, None)[-count:]
        found = unpack_log(packed, lines)
        return [orjson.loads(line) for line in found[-count:]]

    def actions(self, table_id: str) -> list[list[int]]:
        """The moves as [seat, action] pairs: the record's `acts` field (packing.py), or
        the `:actions` list of a table from before it, or the archive's."""
        packed = self.redis.hget(table_key(table_id), "acts")
        if packed is not None:
            return unpack_actions(packed)
        lines = self.redis.lrange(actions_key(table_id), 0, -1)
        if not lines and not self.redis.exists(table_key(table_id)):  # gone from Redis: archived?
            archived = self._archived(table_id)
            return archived["actions"] if archived else []
        return [orjson.loads(line) for line in lines]

    def due_tables(self, now: float, limit: int = 500) -> list[str]:
        """Tables with a deadline at or before `now`, over every shard."""
        with self.redis.pipeline(transaction=False) as pipe:
            for shard in range(INDEX_SHARDS):
                pipe.zrangebyscore(index_key(shard, "deadlines"), "-inf", now, start=0, num=limit)
            return [m.decode() for reply in pipe.execute() for m in reply]

    def postpone(self, table_id: str, until: float) -> None:
        """Push a table whose due move failed (engine down) back, so it does not spin."""
        self.redis.zadd(index_key(shard_of(table_id), "deadlines"), {table_id: until}, xx=True)

    def forget_deadline(self, table_id: str) -> None:
        self.redis.zrem(index_key(shard_of(table_id), "deadlines"), table_id)

    # -- writing -------------------------------------------------------------------------
    def create(
        self,
        table_id: str,
        record: dict[str, str | bytes | int | float],
        log_entry: dict[str, Any],
        now: float,
        expire: int | None = None,
    ) -> bool:
        """Write a new table, listed first in its shard (module docstring); False if a
        table with this id exists already (a retried creation writes nothing twice).
        `expire`: seconds a waiting table lives unless it starts (the claim that starts it
        makes its keys persistent)."""
        shard = shard_of(table_id)
        game = str(record["game"])  # a str: the record's type covers its bytes fields too
        index = f"{STATUS_INDEX[str(record['status'])]}:{game}"
        self.redis.zadd(index_key(shard, index), {table_id: now}, nx=True)
        packed = {**record, "acts": ACTS_MARK}
        state = record.get("state")
        if isinstance(state, bytes):  # (a test's bare record may have none)
            packed["state"] = pack_state(state)
        for name, value in record.items():
            if name.startswith("legal:") and isinstance(value, bytes):
                packed[name] = pack_legal(value)
        fields: list[Any] = [x for pair in packed.items() for x in pair]
        due = self._create(
            keys=[table_key(table_id), log_key(table_id)],
            args=[
                now, self.timing.bot_seconds, self.timing.away_seconds, expire or "",
                pack_log_line(orjson.dumps({**log_entry, "at": now})), *fields,
            ],
        )  # fmt: skip
        if due is None:
            return False
        self._file_deadline(shard, table_id, due)
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
    ) -> tuple[int, int, int]:
        """Apply an engine Step at `table.version`, with each seat's legal actions at it
        (`legal`, as stored in legal:i). Returns (outcome, version, first): outcome 1
        committed (version is the new one), 0 stale (the current version), -1 no table,
        -2 not being played; `first` the log id of the first of `events` (-1 if none was
        written), so a move's answer numbers its events as the log does."""
        new_version = table.version + 1
        to_act = list(step.to_act)
        status = "finished" if step.terminal else "playing"
        update = {"version": new_version, "to_act": to_act, "status": status}
        fields: list[Any] = [
            "version", new_version, "state", pack_state(step.state), "to_act", orjson.dumps(to_act),
            "moved_at", now,
        ]  # fmt: skip
        # Only what the move changes: a field left as the table held it at this version
        # (which the script checks) costs the HSET a field's search and rewrite for nothing.
        if step.turn != table.turn:
            fields += ["turn", step.turn]
        if step.decisions != table.decisions:
            fields += ["decisions", step.decisions]
        for name, now_value, was in (
            ("winners", step.winners, table.winners),
            ("returns", step.returns, table.returns),
        ):
            packed = orjson.dumps(list(now_value))
            if packed != orjson.dumps(was):
                fields += [name, packed]
        # A new decision for every seat: their tries start again (move_limits.py). A seat
        # that had sent none when the table was read is left at its 0; a try of its own
        # that lands between that read and this commit is then counted at the new
        # decision: one try too many there, never one too few.
        for seat in table.seats:
            if seat.tries or seat.index == actor:
                fields += [f"tries:{seat.index}", 0]
        for i, actions in enumerate(legal):
            packed = pack_legal(actions)
            if packed != table.seats[i].legal:  # (most seats' `[]` stays `[]`)
                fields += [f"legal:{i}", packed]
        if step.terminal:
            fields += ["scores", orjson.dumps(final_scores(step)), "status", "finished", "finished_at", now]
        lines = [pack_log_line(orjson.dumps({**e, "version": new_version, "at": now})) for e in events]
        head: list[Any] = [
            int(step.terminal), pack_action(actor, action, table.acts_binary), orjson.dumps(update),
            self.finished_ttl, len(events),
            *lines, *fields,
        ]  # fmt: skip
        keys = [
            table_key(table.id), log_key(table.id), actions_key(table.id), updates_channel(table.id),
            log_chunks_key(table.id),
        ]  # fmt: skip
        for _ in range(_SEAT_RETRIES):
            due, times = self._deadlines(table, actor, mark_away, to_act, step.terminal, now)
            args = [table.version, table.seats_v, *head, *times, "due", due]
            outcome, version, first, unsealed, blocks = self._commit(keys=keys, args=args)
            if outcome != -3:
                break
            # A seat changed (came back, left, rescheduled) since the table was read: its
            # deadlines again from the seats as they are now, at the same version.
            fresh = self.load(table.id)
            if fresh is None:
                return -1, 0, -1
            table = dataclasses.replace(table, seats=fresh.seats, seats_v=fresh.seats_v, due=fresh.due)
        else:
            return 0, int(version), -1  # seats changing faster than a move commits: stale
        if outcome == 1:
            shard = shard_of(table.id)
            if step.terminal:
                self._file_finished(shard, table.id, table.game, now, table.rated)
            elif due != table.due:
                # Filed already when the move leaves the earliest deadline where it was
                # (another seat's, kept): no command. A filing lost to a crash before this
                # move is the reconciler's, as ever.
                self._file_moved_deadline(shard, table.id, due, table.due)
            if unsealed >= LOG_BLOCK and not step.terminal:
                self.seal(table.id, int(blocks))
        return int(outcome), int(version), int(first)

    def seal(self, table_id: str, blocks: int) -> bool:
        """`:log`'s oldest LOG_BLOCK lines into the last chunk of `:logz` (packing.py: a
        third of their bytes or less), if the table has still sealed `blocks` blocks
        (lua/seal.lua: the check that they are the lines read, and the chunk). One round
        trip of two reads and a script of four commands, once a block: about a fifth of a
        command per move (bench redis_cost). A seal lost to a crash is made by the next
        move's. With a folder for them (the archive's), the block goes to the table's file
        instead and leaves Redis (log_blocks.py), for every table that began so."""
        keys = [table_key(table_id), log_key(table_id), log_chunks_key(table_id)]
        if self.blocks is not None:
            with self.redis.pipeline(transaction=False) as pipe:  # (the script checks `blocks`)
                pipe.lrange(log_key(table_id), 0, LOG_BLOCK - 1)
                pipe.hget(table_key(table_id), "logf")
                lines, in_file = pipe.execute()
            if in_file or blocks == 0:  # the table's blocks go to its file (lua/seal.lua)
                if len(lines) < LOG_BLOCK:
                    return False
                block = pack_log_chunk(unpack_log([], lines))
                self.blocks.append(table_id, blocks, block)  # before the record counts it
                return bool(self._seal(keys=keys, args=[blocks, b"", LOG_BLOCK, 2]))
        more = blocks % CHUNK_BLOCKS != 0  # the last chunk takes this block too
        with self.redis.pipeline(transaction=False) as pipe:  # (the script checks `blocks`)
            pipe.lrange(log_key(table_id), 0, LOG_BLOCK - 1)
            if more:
                pipe.lindex(log_chunks_key(table_id), -1)
            lines, *last = pipe.execute()
        if len(lines) < LOG_BLOCK or (more and not last[0]):
            return False
        chunk = pack_log_chunk(unpack_log(last, lines))  # `last`: the chunk it extends, or none
        return bool(self._seal(keys=keys, args=[blocks, chunk, LOG_BLOCK, int(more)]))

    def _deadlines(
        self, table: Table, actor: int, mark_away: bool, to_act: list[int], terminal: bool, now: float
    ) -> tuple[str, list[Any]]:
        """The move's seat fields (the actor's away flag as this move leaves it, when that
        changes it, and the `deadline:i` that change) and earliest deadline
        (seat_deadlines.py), from the seats as `table` holds them."""
        seats = [(s.kind, mark_away if s.index == actor else s.away, s.deadline) for s in table.seats]
        out: list[Any] = []
        if table.seats[actor].away != mark_away:  # the actor's away flag as this move leaves it
            out += [f"away:{actor}", "1" if mark_away else ""]
        if terminal:
            schedule(seats, [], 0, 0, 0, 0, -1, out)
            return "", out
        timing = self.timing
        due = schedule(
            seats, to_act, table.decision_seconds, now, timing.bot_seconds, timing.away_seconds, actor, out
        )
        return due, out

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
            # Absent fields absent: an anonymous seat has no player, and says so by omission.
            "payload": {k: v for k, v in (("player", player), ("player_id", player_id)) if v},
        }  # fmt: skip
        args: list[Any] = [
            seat, token_hash, player or "", now, self.timing.bot_seconds, self.timing.away_seconds,
            pack_log_line(orjson.dumps({**entry, "version": table.version})), player_id or "", table.players,
        ]  # fmt: skip
        keys = [table_key(table.id), log_key(table.id), updates_channel(table.id)]
        outcome, due = self._claim(keys=keys, args=args)
        if outcome == 2:
            self._file_started(shard_of(table.id), table.id, table.game, table.created, due)
        return int(outcome)

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
        args: list[Any] = [
            seat, token_hash, now, self.timing.bot_seconds, self.timing.away_seconds,
            pack_log_line(orjson.dumps(entry)), table.players,
        ]  # fmt: skip
        keys = [table_key(table.id), log_key(table.id), updates_channel(table.id)]
        outcome, due = self._leave(keys=keys, args=args)
        if outcome == 2:
            self._file_deadline(shard_of(table.id), table.id, due)
        return int(outcome)

    def reissue(self, table_id: str, seat: int, player_id: str, token_hash: str) -> int:
        """A new token for a seat bound to `player_id` (the old one stops working): 1, or
        -1 no table, -2 finished, -3 not that player's seat, -4 its player left."""
        return int(self._reissue(keys=[table_key(table_id)], args=[seat, player_id, token_hash]))

    def reschedule(self, table: Table, now: float) -> None:
        """Recompute every seat deadline of a table from its record (as if each seat's
        decision had just changed)."""
        due = self._reschedule(
            keys=[table_key(table.id)],
            args=[now, self.timing.bot_seconds, self.timing.away_seconds, table.players],
        )
        if due is not None:
            self._file_deadline(shard_of(table.id), table.id, due)

    def mark_present(self, table: Table, seat: int, now: float) -> None:
        """A seat that timed out is back: its decisions get the full time again."""
        due = self._present(
            keys=[table_key(table.id)],
            args=[seat, now, self.timing.bot_seconds, self.timing.away_seconds, table.players],
        )
        if due is not None:
            self._file_deadline(shard_of(table.id), table.id, due)

    # -- the indexes ---------------------------------------------------------------------
    def _file_deadline(self, shard: int, table_id: str, due: Any) -> None:
        """One command: the table under its earliest deadline, or out of the deadlines."""
        if due:
            self.redis.zadd(index_key(shard, "deadlines"), {table_id: float(due)})
        else:
            self.redis.zrem(index_key(shard, "deadlines"), table_id)

    def _file_moved_deadline(self, shard: int, table_id: str, due: str, was: str) -> None:
        """A move's new earliest deadline, filed only when it comes sooner than the one it
        replaces. The index needs a score no later than the table's `due`, not an equal
        one: a move nearly always pushes the deadline on (the next seat's time starts
        now), and such a move leaves the earlier score where it was, so most moves file
        nothing (bench redis_cost: a ZADD was a ninth of a move's Redis time). A table
        found under a passed score with nobody past their deadline is filed afresh under
        its own `due` by `refile_early` (tables.py, the deadline beat): one visit per
        seat's decision time at most, against one ZADD per move. The ZADD here is LT, so a
        late filing of an older move never lifts a score a newer one lowered."""
        if not due:
            self.redis.zrem(index_key(shard, "deadlines"), table_id)
        elif not was or float(due) < float(was):
            self.redis.zadd(index_key(shard, "deadlines"), {table_id: float(due)}, lt=True)

    def refile_early(self, table_id: str, due: str) -> None:
        """Lift a table's deadline score, passed while nobody is past their deadline, to its
        `due` as just read. A move may commit between that read and this ZADD with a
        sooner deadline, filed before this lifts it past: so the record's `due` is read
        again after the lift and filed LT, which leaves the index no later than the
        table whichever order the two processes' commands came in."""
        key = index_key(shard_of(table_id), "deadlines")
        if not due:
            self.redis.zrem(key, table_id)
            return
        self.redis.zadd(key, {table_id: float(due)}, xx=True)
        now_due = self.redis.hget(table_key(table_id), "due")
        if now_due is None:
            return  # gone: the reconciler drops its entry
        if not now_due:
            self.redis.zrem(key, table_id)
        elif float(now_due) < float(due):
            self.redis.zadd(key, {table_id: float(now_due)}, lt=True)

    def _file_started(self, shard: int, table_id: str, game: str, created: float, due: Any) -> None:
        with self.redis.pipeline(transaction=True) as pipe:  # one slot: the shard's
            pipe.zadd(index_key(shard, f"live:{game}"), {table_id: created})
            if due:
                pipe.zadd(index_key(shard, "deadlines"), {table_id: float(due)})
            pipe.zrem(index_key(shard, f"open:{game}"), table_id)
            pipe.execute()

    def _file_finished(self, shard: int, table_id: str, game: str, ended: float, rated: bool) -> None:
        with self.redis.pipeline(transaction=True) as pipe:  # one slot: the shard's
            pipe.zadd(index_key(shard, f"finished:{game}"), {table_id: ended})
            if rated:
                pipe.sadd(index_key(shard, "rate"), table_id)
            pipe.zrem(index_key(shard, "deadlines"), table_id)
            pipe.zrem(index_key(shard, f"live:{game}"), table_id)
            pipe.zrem(index_key(shard, f"open:{game}"), table_id)
            pipe.execute()

    def to_rate(self) -> list[str]:
        """Finished rated tables whose ratings are not yet updated (ratings.py)."""
        with self.redis.pipeline(transaction=False) as pipe:
            for shard in range(INDEX_SHARDS):
                pipe.smembers(index_key(shard, "rate"))
            return sorted(m.decode() for reply in pipe.execute() for m in reply)

    def rated(self, table_id: str) -> None:
        self.redis.srem(index_key(shard_of(table_id), "rate"), table_id)

    def reconcile(self, now: float | None = None, batch: int = 500) -> dict[str, int]:
        """Refile every table whose index entries disagree with its record (the module
        docstring says how they can); idempotent, so any process may run it at any time.
        Returns how many entries of each kind were repaired."""
        now = time.time() if now is None else now
        fixed = {"gone": 0, "started": 0, "finished": 0, "deadlines": 0}
        for shard in range(INDEX_SHARDS):
            for game in self.games:
                for name in ("open", "live"):
                    key = index_key(shard, f"{name}:{game}")
                    members = self.redis.zrange(key, 0, -1, withscores=True)
                    for start in range(0, len(members), batch):
                        part = [(m.decode(), score) for m, score in members[start : start + batch]]
                        self._reconcile_part(shard, game, key, part, now, fixed)
            filed = [m.decode() for m in self.redis.zrange(index_key(shard, "deadlines"), 0, -1)]
            for start in range(0, len(filed), batch):
                ids = filed[start : start + batch]
                with self.redis.pipeline(transaction=False) as pipe:
                    for table_id in ids:
                        pipe.hget(table_key(table_id), "status")
                    statuses = pipe.execute()
                dangling = [t for t, status in zip(ids, statuses, strict=True) if status != b"playing"]
                if dangling:  # gone, or finished with the rest of its filing cut off
                    self.redis.zrem(index_key(shard, "deadlines"), *dangling)
                    fixed["deadlines"] += len(dangling)
        return fixed

    def _reconcile_part(
        self,
        shard: int,
        game: str,
        key: str,
        part: list[tuple[str, float]],
        now: float,
        fixed: dict[str, int],
    ) -> None:
        with self.redis.pipeline(transaction=False) as pipe:
            for table_id, _ in part:
                pipe.hmget(table_key(table_id), ["status", "due", "rated", "finished_at", "created"])
                pipe.zscore(index_key(shard, "deadlines"), table_id)
            replies = pipe.execute()
        listed_open = key.endswith(f":open:{game}")
        for (table_id, listed), record, filed in zip(part, replies[0::2], replies[1::2], strict=True):
            status, due, rated, finished_at, created = (_text(v) if v is not None else None for v in record)
            if status is None:
                if now - listed > self.grace:  # expired, or its creation died
                    with self.redis.pipeline(transaction=True) as pipe:
                        pipe.zrem(key, table_id)
                        pipe.zrem(index_key(shard, "deadlines"), table_id)
                        pipe.execute()
                    fixed["gone"] += 1
            elif status == "finished":
                self._file_finished(shard, table_id, game, float(finished_at or now), rated == "1")
                fixed["finished"] += 1
            elif status == "playing" and listed_open:
                self._file_started(shard, table_id, game, float(created or listed), due)
                fixed["started"] += 1
            elif status == "playing":
                # An index score earlier than the record's `due` is as a move leaves it
                # (_file_moved_deadline) and the deadline beat lifts it; a later one, or
                # none, would let a seat's time pass unnoticed.
                want = float(due) if due else None
                if (want is None) != (filed is None) or (
                    want is not None and filed is not None and filed > want + 0.001
                ):
                    self._file_deadline(shard, table_id, due)
                    fixed["deadlines"] += 1


class TablePage(NamedTuple):
    """One page of a lobby list, newest first."""

    tables: list[Table]
    next: str | None  # the `cursor` of the page after this one; None on the last
    total: int  # how many tables the list holds in all
    previous: str | None  # the `before` of the page before this one; None on the first


def _cursor(entry: tuple[float, str]) -> str:
    """A list entry as a cursor: its score (repr: exact) and its id."""
    return f"{entry[0]!r}:{entry[1]}"


def _nearest(
    replies: list[list[tuple[float, str]]], count: int, edge: float, mark_id: str | None, upward: bool
) -> list[tuple[float, str]]:
    """The `count` entries of every shard's reply nearest the mark (`edge`, `mark_id`;
    None: no mark) in the direction read, nearest first. Newest-first order is score
    descending, then id descending, so going down (older) the entries past the mark are
    those below it, and going up (newer) those above it."""
    if upward:
        merged = heapq.merge(*replies, key=lambda item: (item[0], item[1]))
        beyond = (lambda s, i: s > edge or (s == edge and i > mark_id)) if mark_id is not None else None
    else:
        merged = heapq.merge(*replies, key=lambda item: (-item[0], _desc(item[1])))
        beyond = (lambda s, i: s < edge or (s == edge and i < mark_id)) if mark_id is not None else None
    return [entry for entry in merged if beyond is None or beyond(*entry)][:count]


def _desc(table_id: str) -> tuple[int, ...]:
    """A sort key that orders ids descending inside an ascending merge."""
    return tuple(-ord(c) for c in table_id)
