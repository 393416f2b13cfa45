"""A live table's older log, out of Redis while the game goes on (issue 28 item 4: a live
table at most 8 KB of Redis).

A long game's log is most of its bytes: a Trash Cult table near its end held 60 KB of
sealed chunks beside a 6 KB record. Lines once sealed never change, and only a reader
that pages back through the log asks for them (a stream, a page and a move read the
newest lines, which stay in Redis), so each sealed block of LOG_BLOCK lines is appended
to the table's file under the archive's folder instead, the same folder whose Parquet
files take the table once it is over.

A file is a run of records, each a block's number and length (two little-endian u32) and
the block packed as packing.pack_log_chunk packs a chunk. Appends only, one write each:
a process killed mid-seal leaves a whole record or none, and a block appended twice
(two gateways sealing the same block, or a seal retried after the script refused it)
holds the same lines both times, since a block's lines are fixed once it is sealable
(lua/seal.lua), so readers take either copy. A block is in the file before the record
counts it sealed (the script runs after the append), so a reader that saw the count
finds every block below it here.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

HEADER = struct.Struct("<II")


class LogBlocks:
    """The sealed blocks of live tables' logs, one append-only file per table."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, table_id: str) -> Path:
        # Spread over folders by the id's first characters: a folder of 100,000 files
        # is slow to list and to create files in.
        return self.root / table_id[:2] / f"{table_id}.blocks"

    def append(self, table_id: str, block: int, packed: bytes) -> None:
        path = self.path(table_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, HEADER.pack(block, len(packed)) + packed)
        finally:
            os.close(fd)

    def read(self, table_id: str, first: int, end: int) -> list[bytes]:
        """Blocks `first` to `end - 1`, packed, in order. KeyError if one is missing (the
        file went with its table to the archive meanwhile: the caller reads that)."""
        if first >= end:
            return []
        try:
            data = self.path(table_id).read_bytes()
        except FileNotFoundError:
            raise KeyError(table_id) from None
        found: dict[int, bytes] = {}
        at = 0
        while at + HEADER.size <= len(data):
            block, size = HEADER.unpack_from(data, at)
            at += HEADER.size
            if at + size > len(data):
                break  # a record cut short (the machine, not the process, went down)
            if first <= block < end:
                found.setdefault(block, data[at : at + size])
            at += size
        if len(found) != end - first:
            raise KeyError(table_id)
        return [found[b] for b in range(first, end)]

    def delete(self, table_id: str) -> None:
        """The file, once its table is archived (a second delete finds nothing: fine)."""
        self.path(table_id).unlink(missing_ok=True)
