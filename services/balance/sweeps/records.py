"""Per-game records of a sweep: Parquet files partitioned by cell, and per-cell outcomes by seed.

The report directory holds `games/cell=<N>/part-<k>.parquet` (hive partitioning: pyarrow,
pandas, DuckDB and Spark read the folder as one table with a `cell` column). Each part is
sorted by seed, so Parquet's row-group statistics let a lookup by seed skip the rest:
`find_games(path, seed)` gives every cell's game with that seed, with what
`cultists simulate --seed` or the replay page need to play it again. Rows are written as
they stream in, a few thousand per cell at a time, so writing 10M games needs no more
memory than writing ten thousand. A `games.csv` with the same rows is written too while the
sweep is small (`CSV_MAX_GAMES`); past that a spreadsheet could not open it anyway.

`outcomes_by_seed` gives one cell's seed -> winning seats from the chunk results (every
cell of a sweep plays the same seeds).

**Every finished sweep's records.** Whoever finishes a sweep on Celery (`control.finish`)
writes its games to `<records root>/<sweep id>/games/cell=<N>/part-<k>.parquet`, whether or
not anyone asks for a report: the chunk results in Redis expire after
`SWEEP_CHUNKS_KEEP_DAYS`, and these files are what is left to look a game up by seed
(`find_sweep_games(root, sweep_id, seed)`). The root is `$CULTISTS_RECORDS_DIR`, else
`records/` in the platform's data folder (`$CULTISTS_DATA`, a volume in docker-compose and
a PersistentVolumeClaim in deploy/k8s). A sweep's folder is written under a temporary name
and renamed into place, so a finish that runs twice (a finisher killed mid-way) leaves one
copy, never a mix. `sweep.json` in it says which sweep and game it holds. Retention: each
finish deletes the folders finished more than `SWEEP_RECORDS_KEEP_DAYS` (default 30) ago.
"""

from __future__ import annotations

import csv
import os
import shutil
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .plan import game_seed
from .spec import SweepSpec

CSV_MAX_GAMES = 100_000
DAY = 24 * 3600
# How long a finished sweep's per-game records stay on disk.
RECORDS_KEEP_SECONDS = float(os.environ.get("SWEEP_RECORDS_KEEP_DAYS", "30")) * DAY
SWEEP_INFO = "sweep.json"
ROWS_PER_PART = 50_000  # rows buffered per cell before a part file is written
# Rows buffered over all cells: past it the fullest cell is written out, so a sweep of many
# cells (every one filling at once) holds about this many rows, not cells x ROWS_PER_PART.
ROWS_BUFFERED = 50_000


def outcomes_by_seed(spec: SweepSpec, results: Iterable[dict[str, Any]], cell: int) -> dict[int, list[int]]:
    """Seed -> winning seats (empty: a draw) of every game of `cell` in `results`.

    Two cells of one sweep share their seeds, so `outcomes_by_seed(.., a)` and
    `outcomes_by_seed(.., b)` pair game by game. `results` may stream (store.iter_chunk_blobs).
    """
    out: dict[int, list[int]] = {}
    for res in results:
        if res["cell"] != cell:
            continue
        for k in range(res["games"]):
            out[game_seed(spec, res["start"] + k)] = list(res["winners"][k])
    return out


class _PartWriter:
    """Buffers rows per cell and writes each buffer, sorted by seed, as one Parquet part."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.buffers: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        self.parts: dict[Any, int] = defaultdict(int)
        self.schema: pa.Schema | None = None
        self.buffered = 0

    def add(self, row: dict[str, Any]) -> None:
        buf = self.buffers[row["cell"]]
        buf.append(row)
        self.buffered += 1
        if len(buf) >= ROWS_PER_PART:
            self.flush(row["cell"])
        elif self.buffered >= ROWS_BUFFERED:
            self.flush(max(self.buffers, key=lambda c: len(self.buffers[c])))

    def flush(self, cell: Any) -> None:
        rows = self.buffers.pop(cell, [])
        self.buffered -= len(rows)
        if not rows:
            return
        rows.sort(key=lambda r: r["seed"])
        columns = {k: [r.get(k) for r in rows] for k in rows[0] if k != "cell"}
        if self.schema is None:
            table = pa.table(columns)
            table = table.cast(_settled(table.schema))
        else:
            table = pa.table(columns, schema=self.schema)
        self.schema = self.schema or table.schema  # one schema for every part: one table
        folder = self.root / f"cell={cell}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / f"part-{self.parts[cell]}.parquet", compression="zstd")
        self.parts[cell] += 1

    def close(self) -> None:
        for cell in list(self.buffers):
            self.flush(cell)


def _settled(schema: pa.Schema) -> pa.Schema:
    """The first part's schema with the types its values could not show: a part whose games
    were all draws has winners only as empty lists (list<null>), which would refuse the
    next part's seats, so a list of nulls is a list of ints, and a column of nulls text."""
    fields = []
    for f in schema:
        if pa.types.is_list(f.type) and pa.types.is_null(f.type.value_type):
            f = f.with_type(pa.list_(pa.int64()))
        elif pa.types.is_null(f.type):
            f = f.with_type(pa.string())
        fields.append(f)
    return pa.schema(fields)


def _parquet_row(row: dict[str, Any]) -> dict[str, Any]:
    """The CSV row with winners and bots as lists (Parquet has list columns)."""
    out = dict(row)
    out["winners"] = [int(s) for s in row["winners"].split(";") if s] if row["winners"] else []
    out["bots"] = row["bots"].split(";")
    return out


def write_game_records(out_dir: Path, rows: Iterable[dict[str, Any]], csv_too: bool) -> int:
    """`games/` as Parquet (and `games.csv` when `csv_too`) from `game_rows`; returns the rows written."""
    writer = _PartWriter(out_dir / "games")
    count = 0
    fh = (out_dir / "games.csv").open("w", newline="") if csv_too else None
    try:
        table_writer = None
        for row in rows:
            if fh is not None:
                if table_writer is None:
                    table_writer = csv.DictWriter(fh, fieldnames=list(row), extrasaction="ignore", restval="")
                    table_writer.writeheader()
                table_writer.writerow(row)
            writer.add(_parquet_row(row))
            count += 1
        writer.close()
    finally:
        if fh is not None:
            fh.close()
    return count


def find_games(path: str | Path, seed: int, cell: int | None = None) -> list[dict[str, Any]]:
    """The games of a report's `games/` folder played with `seed` (one per cell, or `cell`'s)."""
    dataset = ds.dataset(Path(path), format="parquet", partitioning="hive")
    where = ds.field("seed") == seed
    if cell is not None:
        where = where & (ds.field("cell") == cell)
    return sorted(dataset.to_table(filter=where).to_pylist(), key=lambda r: r["cell"])


def records_root() -> Path:
    """Where finished sweeps' records go: $CULTISTS_RECORDS_DIR, else DATA/records."""
    if os.environ.get("CULTISTS_RECORDS_DIR"):
        return Path(os.environ["CULTISTS_RECORDS_DIR"])
    from services.runtime.topology import data_dir

    return data_dir() / "records"


def _safe_id(sweep_id: str) -> str:
    if not sweep_id or not all(c.isalnum() or c in "-_" for c in sweep_id):
        raise ValueError(f"bad sweep id {sweep_id!r}: letters, digits, '-' and '_' only")
    return sweep_id


def write_sweep_records(
    root: Path, sweep_id: str, rows: Iterable[dict[str, Any]], info: dict[str, Any]
) -> dict[str, Any]:
    """Write a finished sweep's per-game records to `root/<sweep_id>/` (replacing any older
    copy whole); returns {"path", "games"} for the summary."""
    folder = Path(root) / _safe_id(sweep_id)
    tmp = Path(root) / f".tmp-{sweep_id}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir(parents=True)
    try:
        count = write_game_records(tmp, rows, csv_too=False)
        (tmp / SWEEP_INFO).write_bytes(
            orjson.dumps({**info, "sweep": sweep_id, "games": count, "written": time.time()})
        )
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {"path": str(folder), "games": count}


def find_sweep_games(
    root: str | Path, sweep_id: str, seed: int, cell: int | None = None
) -> list[dict[str, Any]]:
    """`find_games` in a finished sweep's records under `root` (records_root())."""
    folder = Path(root) / _safe_id(sweep_id) / "games"
    if not folder.is_dir():
        raise FileNotFoundError(
            f"no per-game records of sweep {sweep_id} under {root} (expired, or never written)"
        )
    return find_games(folder, seed, cell)


def prune_records(
    root: str | Path, keep_seconds: float = RECORDS_KEEP_SECONDS, now: float | None = None
) -> list[str]:
    """Delete the sweeps' record folders (and abandoned temporary ones) older than
    `keep_seconds`; returns the names deleted."""
    root = Path(root)
    if not root.is_dir():
        return []
    cutoff = (now if now is not None else time.time()) - keep_seconds
    gone = []
    for folder in root.iterdir():
        if not folder.is_dir():
            continue
        marker = folder / SWEEP_INFO
        stamp = (marker if marker.exists() else folder).stat().st_mtime
        if stamp < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder.name)
    return sorted(gone)
