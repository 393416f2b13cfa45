"""Everything a sweep keeps, in Redis, so it survives restarts of its clients and workers.

Keys (all under `cultists:sweep:<id>:`):

| key | type | holds |
|---|---|---|
| `meta` | hash | spec (JSON), status, kind, times, totals, counters `games_done`, `chunks_done` |
| `chunks` | hash | chunk id -> packed chunk result; written with HSETNX, never overwritten |
| `failed` | hash | chunk id -> error text of a chunk that raised |
| `summary` | string | the JSON summary once aggregated |
| `replays` | hash | cell -> replay record of the cell's representative game |

plus `cultists:sweeps` (sorted set of sweep ids by creation time) and
`cultists:nightly:<game>` (nightly sweep ids scored by date, for the drift comparison).

Idempotence is one Lua script: the chunk result is stored only if its key is absent, and
the counters move only when it was stored — atomically, so a worker killed between the two
cannot leave a result uncounted, and a redelivered chunk can never count twice.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import orjson
import redis

PREFIX = "cultists:sweep:"
INDEX = "cultists:sweeps"
NIGHTLY = "cultists:nightly:"
# Finished sweeps are kept this long (nightly comparisons need last night's).
KEEP_SECONDS = 30 * 24 * 3600

ACTIVE = ("queued", "running")
FINISHED = ("done", "cancelled", "failed")

_STORE_CHUNK = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], 'games_done', ARGV[3])
  local done = redis.call('HINCRBY', KEYS[2], 'chunks_done', 1)
  redis.call('HDEL', KEYS[3], ARGV[1])
  return {1, done}
end
return {0, tonumber(redis.call('HGET', KEYS[2], 'chunks_done') or '0')}
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
    return f"{PREFIX}{sweep_id}:{part}"


def new_id() -> str:
    return uuid.uuid4().hex[:16]


class SweepStore:
    """Typed access to a sweep's keys; every method is one or two round trips."""

    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self._store_chunk = client.register_script(_STORE_CHUNK)
        self._start = client.register_script(_START)

    @classmethod
    def from_url(cls, url: str) -> SweepStore:
        return cls(redis.Redis.from_url(url))

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
        pipe = self.r.pipeline()
        pipe.hset(
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
        pipe.zadd(INDEX, {sweep_id: now})
        pipe.execute()

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

    def store_chunk(self, sweep_id: str, chunk_id: str, blob: bytes, games: int) -> tuple[bool, int]:
        """Store a chunk result once; returns (stored now, chunks done so far)."""
        stored, done = self._store_chunk(
            keys=[key(sweep_id, "chunks"), key(sweep_id, "meta"), key(sweep_id, "failed")],
            args=[chunk_id, blob, games],
        )
        return bool(stored), int(done)

    def record_failure(self, sweep_id: str, chunk_id: str, error: str) -> None:
        pipe = self.r.pipeline()
        pipe.hset(key(sweep_id, "failed"), chunk_id, error)
        pipe.hset(key(sweep_id, "meta"), mapping={"status": "failed", "error": f"chunk {chunk_id}: {error}"})
        pipe.execute()

    def failures(self, sweep_id: str) -> dict[str, str]:
        return {k.decode(): v.decode() for k, v in self.r.hgetall(key(sweep_id, "failed")).items()}

    def chunk_blobs(self, sweep_id: str) -> dict[str, bytes]:
        return {k.decode(): v for k, v in self.r.hgetall(key(sweep_id, "chunks")).items()}

    # --- status --------------------------------------------------------------------------
    def set_status(self, sweep_id: str, status: str, **fields: Any) -> None:
        self.r.hset(key(sweep_id, "meta"), mapping={"status": status, **fields})

    def claim_aggregation(self, sweep_id: str, seconds: int = 600) -> bool:
        """One finisher at a time; the lock expires so a finisher killed mid-way is retried."""
        return bool(self.r.set(key(sweep_id, "aggregating"), "1", nx=True, ex=seconds))

    def release_aggregation(self, sweep_id: str) -> None:
        self.r.delete(key(sweep_id, "aggregating"))

    def cancel(self, sweep_id: str) -> bool:
        """Mark an active sweep cancelled; False if it had already finished."""
        with self.r.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key(sweep_id, "meta"))
                    status = pipe.hget(key(sweep_id, "meta"), "status")
                    if status is None or status.decode() not in ACTIVE:
                        pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.hset(
                        key(sweep_id, "meta"), mapping={"status": "cancelled", "finished": repr(time.time())}
                    )
                    pipe.execute()
                    self.expire(sweep_id)
                    return True
                except redis.WatchError:
                    continue

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
        pipe.execute()

    def summary(self, sweep_id: str) -> dict[str, Any] | None:
        raw = self.r.get(key(sweep_id, "summary"))
        return orjson.loads(raw) if raw is not None else None

    def replays(self, sweep_id: str) -> dict[int, dict[str, Any]]:
        raw = self.r.hgetall(key(sweep_id, "replays"))
        return {int(k): orjson.loads(v) for k, v in raw.items()}

    def expire(self, sweep_id: str, seconds: int = KEEP_SECONDS) -> None:
        pipe = self.r.pipeline()
        for part in ("meta", "chunks", "failed", "summary", "replays"):
            pipe.expire(key(sweep_id, part), seconds)
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
