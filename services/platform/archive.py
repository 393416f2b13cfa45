"""Finished tables leave Redis for Parquet files, and are read back from them as if they
had stayed (issue 28 item 4).

A finished table is wanted for a while (its players look at the end screen, a replay is
opened), then rarely. Kept in Redis it costs ~4-20 KB of RAM for days; here, after
`archive_grace_seconds` (10 minutes) it is written, with everything a reader asks of it
(record, final state, log, actions, seats, result), to a Parquet file under the data
folder's `archive/tables/`, the columnar storage the sweeps' game records use, and its
Redis keys are deleted. `TableStore` reads a table, its log and its actions from here
when Redis no longer has them, so replays, history and `/api/tables/{id}` need no change.

Crash safety: the archiver writes a batch's plan (its id and its tables) to Redis first,
then the batch's file (whole, under a temporary name, then renamed into place), then
deletes the tables' keys, then the plan. An archiver that dies anywhere is finished by
the next: a plan whose file exists needs only its deletes (nothing was deleted before the
file was whole), a plan without one is written again from Redis (nothing was deleted
yet), under the same name, so no table is lost and none is in two files.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from pathlib import Path
from typing import Any, cast

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from .keys import (
    ARCHIVE_PLAN,
    INDEX_SHARDS,
    actions_key,
    index_key,
    log_chunks_key,
    log_key,
    shard_of,
    table_key,
)
from .log_blocks import LogBlocks
from .packing import unpack_actions, unpack_log

# Columns of an archived table: the record's fields as Redis held them (binary-safe), and
# its log and action lists as JSON.
SCHEMA = pa.schema(
    [  # type: ignore[arg-type]  # pyarrow-stubs join the column types to object, not DataType
        ("table", pa.string()),
        ("finished_at", pa.float64()),
        ("record", pa.binary()),
        ("log", pa.binary()),
        ("actions", pa.binary()),
    ]
)
ARCHIVE_LOCK = "gw:{archive}:lock"


class TableArchive:
    """The archived tables' files, and a per-process index of which file holds which table
    (read from the files' `table` column, refreshed when a lookup misses)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # Live tables' sealed log blocks (log_blocks.py), which join a table's row here.
        self.blocks = LogBlocks(self.root / "logs")
        self._lock = threading.Lock()
        self._index: dict[str, Path] = {}
        self._seen: set[str] = set()

    def path(self, batch_id: str) -> Path:
        return self.root / f"{batch_id}.parquet"

    def write(self, batch_id: str, rows: list[dict[str, Any]]) -> Path:
        """The batch's file, whole or not at all (written aside, then renamed into place)."""
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.path(batch_id)
        tmp = final.with_suffix(f".tmp-{os.getpid()}")
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), tmp)
        os.replace(tmp, final)
        return final

    def _refresh(self) -> None:
        with self._lock:
            for path in sorted(self.root.glob("*.parquet")) if self.root.exists() else []:
                if path.name in self._seen:
                    continue
                ids = cast(list[str], pq.read_table(path, columns=["table"]).column("table").to_pylist())
                for table_id in ids:  # (a table's id is never null)
                    self._index[table_id] = path
                self._seen.add(path.name)

    def find(self, table_id: str) -> dict[str, Any] | None:
        """The archived row of a table: record (field -> bytes), log and actions; None if
        no file holds it."""
        path = self._index.get(table_id)
        if path is None:
            self._refresh()
            path = self._index.get(table_id)
            if path is None:
                return None
        rows = pq.read_table(path, filters=[("table", "=", table_id)]).to_pylist()
        if not rows:
            return None
        row = rows[0]
        return {
            "record": _record(row),
            "log": orjson.loads(row["log"]),
            "actions": orjson.loads(row["actions"]),
            "finished_at": row["finished_at"],
        }

    def recent(self, limit: int) -> list[tuple[str, dict[bytes, bytes], float]]:
        """The newest archived tables (id, record, finished_at), newest first."""
        files = sorted(self.root.glob("*.parquet"), reverse=True) if self.root.exists() else []
        found: list[tuple[str, dict[bytes, bytes], float]] = []
        for path in files:
            for row in pq.read_table(path, columns=["table", "finished_at", "record"]).to_pylist():
                found.append((row["table"], _record(row), row["finished_at"]))
            if len(found) >= limit:
                break
        found.sort(key=lambda item: -item[2])
        return found[:limit]


def _record(row: dict[str, Any]) -> dict[bytes, bytes]:
    """A row's record as Redis gave it: field -> value, bytes both (see _record_json)."""
    return {k.encode(): v.encode("latin-1") for k, v in orjson.loads(row["record"]).items()}


def _record_json(raw: dict[bytes, bytes]) -> bytes:
    """The record as JSON text, each value's bytes as latin-1 (binary-safe both ways)."""
    return orjson.dumps({k.decode(): v.decode("latin-1") for k, v in raw.items()})


class Archiver:
    """Moves finished tables older than the grace period from Redis into the archive."""

    def __init__(self, client: Any, archive: TableArchive, games: list[str], grace: float) -> None:
        self.redis = client
        self.archive = archive
        self.games = list(games)
        self.grace = grace

    def run(self, now: float | None = None, batch: int = 200) -> int:
        """One pass: finish a dead archiver's batch, then archive one more; how many tables
        left Redis. One pass at a time, platform-wide (a lock that expires)."""
        if not self.redis.set(ARCHIVE_LOCK, "1", nx=True, ex=300):
            return 0
        try:
            moved = self._finish_plan()
            plan = self.plan(time.time() if now is None else now, batch)
            if plan is not None:
                self.write(*plan)
                moved += self.delete(plan[1])
            return moved
        finally:
            self.redis.delete(ARCHIVE_LOCK)

    def _finish_plan(self) -> int:
        raw = self.redis.hgetall(ARCHIVE_PLAN)
        if not raw:
            return 0
        batch_id = raw[b"batch"].decode()
        ids = orjson.loads(raw[b"tables"])
        if not self.archive.path(batch_id).exists():
            self.write(batch_id, ids)
        return self.delete(ids)

    def plan(self, now: float, batch: int) -> tuple[str, list[str]] | None:
        """The next batch: finished tables past the grace period whose ratings are settled,
        recorded in Redis before anything is written."""
        with self.redis.pipeline(transaction=False) as pipe:
            for shard in range(INDEX_SHARDS):
                pipe.smembers(index_key(shard, "rate"))
                for game in self.games:
                    pipe.zrangebyscore(
                        index_key(shard, f"finished:{game}"), "-inf", now - self.grace, 0, batch
                    )
            replies = pipe.execute()
        per_shard = 1 + len(self.games)
        unrated = {m.decode() for reply in replies[0::per_shard] for m in reply}
        ids = sorted(
            {
                m.decode()
                for shard in range(INDEX_SHARDS)
                for reply in replies[shard * per_shard + 1 : (shard + 1) * per_shard]
                for m in reply
            }
            - unrated
        )[:batch]
        if not ids:
            return None
        batch_id = f"{int(now):011d}-{secrets.token_hex(4)}"
        self.redis.hset(ARCHIVE_PLAN, mapping={"batch": batch_id, "tables": orjson.dumps(ids)})
        return batch_id, ids

    def write(self, batch_id: str, ids: list[str]) -> None:
        """The batch's file, from the tables still in Redis (the plan's tables whose keys
        expired meanwhile are left out: nothing of them is left to keep)."""
        rows = []
        for table_id in ids:
            with self.redis.pipeline(transaction=False) as pipe:  # a finished table no longer changes
                pipe.hgetall(table_key(table_id))
                pipe.lrange(log_chunks_key(table_id), 0, -1)
                pipe.lrange(log_key(table_id), 0, -1)
                pipe.lrange(actions_key(table_id), 0, -1)
                record, chunks, log, actions = pipe.execute()
            if not record:
                continue
            if record.get(b"logf"):  # its sealed blocks are in its file (log_blocks.py)
                chunks = self.archive.blocks.read(table_id, 0, int(record.get(b"logz") or 0))
            rows.append(
                {
                    "table": table_id,
                    "finished_at": float(record.get(b"finished_at") or record[b"created"]),
                    "record": _record_json(record),
                    # The archive keeps plain JSON (packing.py is Redis's business).
                    "log": b"[" + b",".join(unpack_log(chunks, log)) + b"]",
                    "actions": (
                        orjson.dumps(unpack_actions(record[b"acts"]))
                        if b"acts" in record
                        else b"[" + b",".join(actions) + b"]"
                    ),
                }
            )
        self.archive.write(batch_id, rows)

    def delete(self, ids: list[str]) -> int:
        """The batch's tables leave Redis (their keys, then their index entries), then the plan."""
        for table_id in ids:
            self.redis.delete(
                table_key(table_id), log_chunks_key(table_id), log_key(table_id), actions_key(table_id)
            )
            self.archive.blocks.delete(table_id)  # after Redis: a reader that saw the record finds it
        with self.redis.pipeline(transaction=False) as pipe:
            for table_id in ids:
                for game in self.games:
                    pipe.zrem(index_key(shard_of(table_id), f"finished:{game}"), table_id)
            pipe.execute()
        self.redis.delete(ARCHIVE_PLAN)
        return len(ids)
