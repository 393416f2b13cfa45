"""Everything a sweep keeps, in Redis, so it survives restarts of its clients and workers.

Keys (all under `cultists:sweep:{<id>}:`: the id is their hash tag, so a sweep's keys
share one slot and the store runs on one Redis or a Redis Cluster alike):

| key | type | holds |
|---|---|---|
| `meta` | hash | spec (JSON), status, kind, times, totals, counters `games_done`, `chunks_done` |
| `chunks` | hash | chunk id -> packed chunk result; written with HSETNX, never overwritten |
| `partials` | hash | chunk id -> packed partial aggregate of that chunk (partial.py), stored with it |
| `failed` | hash | chunk id -> error text of a chunk that raised |
| `summary` | string | the JSON summary once aggregated |
| `replays` | hash | cell -> replay record of the cell's representative game |
| `leases` | hash | chunk id -> time (epoch s) until which a worker is known to be playing it |

plus `cultists:{sweeps}` (sorted set of sweep ids by creation time),
`cultists:{sweeps}:active` (set of queued and running sweeps, what the reconciler walks) and
`cultists:nightly:<game>` (nightly sweep ids scored by date, for the drift comparison). A
change to a sweep and to those lists is two writes, never one transaction: a sweep is
listed active before it is made, and leaves the list after it is finished, so a crash in
between leaves an entry the reconciler settles.

Idempotence is one Lua script: the chunk result is stored only if its key is absent, and
the counters move only when it was stored — atomically, so a worker killed between the two
cannot leave a result uncounted, and a redelivered chunk can never count twice.

Leases are how a lost chunk is told from a slow one: a worker playing a chunk renews its
lease every few seconds (`tasks.py`); a missing chunk whose lease ran out lost its worker,
and the reconciler (`control.reconcile`) queues it again.

Retention: a finished sweep's meta, summary and replays are kept `SWEEP_KEEP_DAYS` (30:
nightly comparisons read last night's summary); its chunk results, the bulk (about 20
bytes a game), only `SWEEP_CHUNKS_KEEP_DAYS` (2: long enough for `--follow` to write the
per-game records and for the next night to pair its games with these).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from typing import Any

import orjson

from services.runtime.redis_client import connect
from services.runtime.redis_types import RedisClient

PREFIX = "cultists:sweep:"
INDEX = "cultists:{sweeps}"
ACTIVE_SET = "cultists:{sweeps}:active"
NIGHTLY = "cultists:nightly:"
DAY = 24 * 3600
# Finished sweeps are kept this long (nightly comparisons need last night's summary) ...
KEEP_SECONDS = int(float(os.environ.get("SWEEP_KEEP_DAYS", "30")) * DAY)
# ... and their chunk results, 20 bytes a game (200 MB for a 10M-game night), this long.
CHUNKS_KEEP_SECONDS = int(float(os.environ.get("SWEEP_CHUNKS_KEEP_DAYS", "2")) * DAY)

ACTIVE = ("queued", "running")
FINISHED = ("done", "cancelled", "failed")

_STORE_CHUNK = """
redis.call('HDEL', KEYS[4], ARGV[1])
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  if ARGV[5] ~= '' then redis.call('HSET', KEYS[5], ARGV[1], ARGV[5]) end
  redis.call('HINCRBY', KEYS[2], 'games_done', ARGV[3])
  local done = redis.call('HINCRBY', KEYS[2], 'chunks_done', 1)
  redis.call('HSET', KEYS[2], 'progressed', ARGV[4])
  redis.call('HDEL', KEYS[3], ARGV[1])
  return {1, done}
end
return {0, tonumber(redis.call('HGET', KEYS[2], 'chunks_done') or '0')}
"""

_CANCEL = """
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'queued' and status ~= 'running' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'finished', ARGV[1])
return 1
"""

_START = """
local status = redis.call('HGET', KEYS[1], 'status')
if status == 'queued' then
  redis.call('HSET', KEYS[1], 'status', 'running', 'started', ARGV[1])
  return 'running'
end
return status
"""


def key(sweep_id: str, part: str) -> str:
    return f"{PREFIX}{{{sweep_id}}}:{part}"


def new_id() -> str:
    return uuid.uuid4().hex[:16]


def _once(scan: Iterator[tuple[bytes, bytes]]) -> Iterator[tuple[str, bytes]]:
    """HSCAN may return a field twice (the hash table resized mid-scan); a chunk must count once."""
    seen: set[bytes] = set()
    for field_name, value in scan:
        if field_name not in seen:
            seen.add(field_name)
            yield field_name.decode(), value


class SweepStore:
    """Typed access to a sweep's keys; every method is one or two round trips."""

    def __init__(self, client: RedisClient) -> None:
        self.r = client
        self._store_chunk = client.register_script(_STORE_CHUNK)
        self._start = client.register_script(_START)
        self._cancel = client.register_script(_CANCEL)

    @classmethod
    def from_url(cls, url: str, cluster: bool = False) -> SweepStore:
        return cls(connect(url, cluster))

    # --- creation ------------------------------------------------------------------------
    def create(
        self,
        sweep_id: str,
        spec: dict[str, Any],
        total_games: int,
        total_chunks: int,
        kind: str = "adhoc",
        extra: dict[str, str] | None = None,
    ) -> None:
        now = time.time()
        with self.r.pipeline(transaction=False) as lists:  # listed first, then made
            lists.zadd(INDEX, {sweep_id: now})
            lists.sadd(ACTIVE_SET, sweep_id)
            lists.execute()
        self.r.hset(
            key(sweep_id, "meta"),
            mapping={
                "spec": orjson.dumps(spec),
                "status": "queued",
                "kind": kind,
                "created": repr(now),
                "total_games": total_games,
                "total_chunks": total_chunks,
                "games_done": 0,
                "chunks_done": 0,
                **(extra or {}),
            },
        )

    def exists(self, sweep_id: str) -> bool:
        return bool(self.r.exists(key(sweep_id, "meta")))

    def meta(self, sweep_id: str) -> dict[str, str]:
        raw = self.r.hgetall(key(sweep_id, "meta"))
        return {k.decode(): v.decode() for k, v in raw.items()}

    def spec(self, sweep_id: str) -> dict[str, Any]:
        raw = self.r.hget(key(sweep_id, "meta"), "spec")
        if raw is None:
            raise KeyError(sweep_id)
        return orjson.loads(raw)

    def meta_field(self, sweep_id: str, field: str) -> str | None:
        """One field of the sweep's meta, without reading its spec along."""
        raw = self.r.hget(key(sweep_id, "meta"), field)
        return raw.decode() if raw is not None else None

    def status(self, sweep_id: str) -> str | None:
        raw = self.r.hget(key(sweep_id, "meta"), "status")
        return raw.decode() if raw is not None else None

    # --- chunk lifecycle -----------------------------------------------------------------
    def mark_started(self, sweep_id: str) -> str | None:
        """queued -> running (first chunk to start); the status now, None if no such sweep."""
        out = self._start(keys=[key(sweep_id, "meta")], args=[repr(time.time())])
        return out.decode() if isinstance(out, bytes) else None

    def has_chunk(self, sweep_id: str, chunk_id: str) -> bool:
        return bool(self.r.hexists(key(sweep_id, "chunks"), chunk_id))

    def store_chunk(
        self, sweep_id: str, chunk_id: str, blob: bytes, games: int, partial: bytes = b""
    ) -> tuple[bool, int]:
        """Store a chunk result (and its partial aggregate) once; returns (stored now, chunks done so far)."""
        stored, done = self._store_chunk(
            keys=[
                key(sweep_id, "chunks"),
                key(sweep_id, "meta"),
                key(sweep_id, "failed"),
                key(sweep_id, "leases"),
                key(sweep_id, "partials"),
            ],
            args=[chunk_id, blob, games, repr(time.time()), partial],
        )
        return bool(stored), int(done)

    def chunk_ids(self, sweep_id: str) -> set[str]:
        """Ids of the chunks stored so far (names only: cheap even for 40,000 chunks)."""
        return {k.decode() for k in self.r.hkeys(key(sweep_id, "chunks"))}

    def iter_chunk_blobs(self, sweep_id: str, batch: int = 200):
        """Every stored chunk result, a few hundred at a time: memory stays flat however
        big the sweep (HSCAN; each chunk is stored once and never changes)."""
        yield from _once(self.r.hscan_iter(key(sweep_id, "chunks"), count=batch))

    def iter_partials(self, sweep_id: str, batch: int = 500):
        """(chunk id, packed partial) of every stored chunk that has one, a batch at a time."""
        yield from _once(self.r.hscan_iter(key(sweep_id, "partials"), count=batch))

    def chunk_blobs_of(self, sweep_id: str, chunk_ids: list[str]) -> list[bytes | None]:
        """The stored results of `chunk_ids` in that order (None where absent), one round trip."""
        if not chunk_ids:
            return []
        return self.r.hmget(key(sweep_id, "chunks"), chunk_ids)

    def chunk_blob(self, sweep_id: str, chunk_id: str) -> bytes | None:
        return self.r.hget(key(sweep_id, "chunks"), chunk_id)

    # --- progress of chunks that gave way to the nightly ----------------------------------
    def keep_progress(self, sweep_id: str, chunk_id: str, blob: bytes) -> None:
        """The games a chunk finished before it gave way (simulate.py `progress`), packed."""
        self.r.hset(key(sweep_id, "progress"), chunk_id, blob)

    def progress_of(self, sweep_id: str, chunk_id: str) -> bytes | None:
        return self.r.hget(key(sweep_id, "progress"), chunk_id)

    def drop_progress(self, sweep_id: str, chunk_id: str) -> None:
        self.r.hdel(key(sweep_id, "progress"), chunk_id)

    # --- leases (who is playing which chunk) --------------------------------------------
    def renew_lease(self, sweep_id: str, chunk_id: str, seconds: float) -> None:
        """A worker is playing `chunk_id` and will say so again within `seconds`."""
        self.r.hset(key(sweep_id, "leases"), chunk_id, repr(time.time() + seconds))

    def drop_lease(self, sweep_id: str, chunk_id: str) -> None:
        self.r.hdel(key(sweep_id, "leases"), chunk_id)

    def leases(self, sweep_id: str) -> dict[str, float]:
        return {k.decode(): float(v) for k, v in self.r.hgetall(key(sweep_id, "leases")).items()}

    def active_ids(self) -> list[str]:
        return sorted(m.decode() for m in self.r.smembers(ACTIVE_SET))

    def forget_active(self, sweep_id: str) -> None:
        self.r.srem(ACTIVE_SET, sweep_id)

    def record_failure(self, sweep_id: str, chunk_id: str, error: str) -> None:
        pipe = self.r.pipeline()
        pipe.hset(key(sweep_id, "failed"), chunk_id, error)
        pipe.hset(key(sweep_id, "meta"), mapping={"status": "failed", "error": f"chunk {chunk_id}: {error}"})
        pipe.execute()
        self.r.srem(ACTIVE_SET, sweep_id)

    def failures(self, sweep_id: str) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.r.hgetall(key(sweep_id, "failed")).items()}

    def chunk_blobs(self, sweep_id: str) -> dict[str, bytes]:
        return {k.decode(): v for k, v in self.r.hgetall(key(sweep_id, "chunks")).items()}

    # --- status --------------------------------------------------------------------------
    def set_status(self, sweep_id: str, status: str, **fields: Any) -> None:
        self.r.hset(key(sweep_id, "meta"), mapping={"status": status, **fields})
        if status not in ACTIVE:
            self.r.srem(ACTIVE_SET, sweep_id)

    def claim_aggregation(self, sweep_id: str, seconds: int = 600) -> bool:
        """One finisher at a time; the lock expires so a finisher killed mid-way is retried."""
        return bool(self.r.set(key(sweep_id, "aggregating"), "1", nx=True, ex=seconds))

    def renew_aggregation(self, sweep_id: str, seconds: float) -> None:
        """Extend a held aggregation claim (leases.AggregationHeartbeat)."""
        self.r.expire(key(sweep_id, "aggregating"), max(1, int(seconds)))

    def release_aggregation(self, sweep_id: str) -> None:
        self.r.delete(key(sweep_id, "aggregating"))

    def cancel(self, sweep_id: str) -> bool:
        """Mark an active sweep cancelled; False if it had already finished."""
        if not self._cancel(keys=[key(sweep_id, "meta")], args=[repr(time.time())]):
            return False
        self.r.srem(ACTIVE_SET, sweep_id)
        self.expire(sweep_id)
        return True

    # --- results -------------------------------------------------------------------------
    def save_summary(
        self, sweep_id: str, summary: dict[str, Any], replays: dict[int, dict[str, Any]], finished: float
    ) -> None:
        """Summary, replays and status `done` in one MULTI: a reader never sees one without the other."""
        pipe = self.r.pipeline(transaction=True)
        pipe.set(key(sweep_id, "summary"), orjson.dumps(summary))
        if replays:
            pipe.hset(key(sweep_id, "replays"), mapping={str(c): orjson.dumps(r) for c, r in replays.items()})
        pipe.hset(key(sweep_id, "meta"), mapping={"status": "done", "finished": repr(finished)})
        pipe.delete(key(sweep_id, "leases"))
        pipe.delete(key(sweep_id, "progress"))
        pipe.execute()
        self.r.srem(ACTIVE_SET, sweep_id)

    def summary(self, sweep_id: str) -> dict[str, Any] | None:
        raw = self.r.get(key(sweep_id, "summary"))
        return orjson.loads(raw) if raw is not None else None

    def replays(self, sweep_id: str) -> dict[int, dict[str, Any]]:
        raw = self.r.hgetall(key(sweep_id, "replays"))
        return {int(k): orjson.loads(v) for k, v in raw.items()}

    def expire(
        self, sweep_id: str, seconds: int = KEEP_SECONDS, chunk_seconds: int = CHUNKS_KEEP_SECONDS
    ) -> None:
        """Let a finished sweep go: chunk results after `chunk_seconds`, the rest after `seconds`."""
        pipe = self.r.pipeline()
        for part in ("meta", "failed", "summary", "replays"):
            pipe.expire(key(sweep_id, part), seconds)
        pipe.expire(key(sweep_id, "chunks"), min(chunk_seconds, seconds))
        pipe.expire(key(sweep_id, "partials"), min(chunk_seconds, seconds))
        pipe.delete(key(sweep_id, "leases"))
        pipe.delete(key(sweep_id, "progress"))
        pipe.execute()

    # --- nightly -------------------------------------------------------------------------
    def add_nightly(self, game: str, day: int, sweep_id: str) -> None:
        self.r.zadd(f"{NIGHTLY}{game}", {sweep_id: day})

    def nightly_before(self, game: str, day: int) -> str | None:
        """The latest finished nightly sweep of `game` from a night before `day`."""
        ids = self.r.zrevrangebyscore(f"{NIGHTLY}{game}", f"({day}", "-inf")
        for raw in ids:
            sweep_id = raw.decode()
            if self.status(sweep_id) == "done" and self.summary(sweep_id) is not None:
                return sweep_id
        return None

    def set_latest_drift(self, game: str, drift: dict[str, Any]) -> None:
        self.r.set(f"{NIGHTLY}{game}:drift", orjson.dumps(drift))

    def latest_drift(self, game: str) -> dict[str, Any] | None:
        raw = self.r.get(f"{NIGHTLY}{game}:drift")
        return orjson.loads(raw) if raw is not None else None
