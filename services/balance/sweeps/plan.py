"""Splitting a sweep into chunk tasks by seed block.

Game i of *every* cell is played with seed `spec.seed + i`: the cells of a sweep see the
same deals and the same bot streams, so a difference between two variants is a paired
comparison (same deal, other rules), which halves the noise a designer must see through.
The games of a cell are cut into blocks of `spec.chunk` consecutive indices; a chunk is
one (cell, block) pair, named `"<cell>-<block>"`. That name is the chunk's identity
everywhere — task id, result key — so a chunk redelivered after a crash writes to the
same key and is counted once.

Chunks are listed block-major (block 0 of every cell, then block 1, ...), so partial
results and the progress bar advance evenly over the grid instead of one cell at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Cell, SweepSpec


@dataclass(frozen=True)
class Chunk:
    cell: int
    block: int
    start: int  # first game index
    games: int

    @property
    def id(self) -> str:
        return f"{self.cell}-{self.block}"

    def indices(self) -> range:
        return range(self.start, self.start + self.games)


def game_seed(spec: SweepSpec, game_index: int) -> int:
    """The seed of game `game_index` in any cell: the same in every cell (paired design)."""
    return spec.seed + game_index


def chunks(spec: SweepSpec, cells: list[Cell] | None = None) -> list[Chunk]:
    """Every chunk of the plan; a skipped cell (spec.py `_mark_unchanged`) has none."""
    cells = spec.played_cells() if cells is None else [c for c in cells if c.skipped is None]
    blocks = (spec.games + spec.chunk - 1) // spec.chunk
    out = []
    for block in range(blocks):
        start = block * spec.chunk
        size = min(spec.chunk, spec.games - start)
        for cell in cells:
            out.append(Chunk(cell.index, block, start, size))
    return out


def chunk_by_id(spec: SweepSpec, chunk_id: str) -> Chunk:
    """Rebuild a chunk from its id (a task carries only the id; the plan is the spec)."""
    try:
        cell_text, block_text = chunk_id.split("-")
        cell, block = int(cell_text), int(block_text)
    except ValueError:
        raise ValueError(f"bad chunk id {chunk_id!r}") from None
    ncells = len(spec.cells())
    start = block * spec.chunk
    if not (0 <= cell < ncells and 0 <= start < spec.games):
        raise ValueError(f"chunk {chunk_id!r} is outside this sweep's plan")
    return Chunk(cell, block, start, min(spec.chunk, spec.games - start))
