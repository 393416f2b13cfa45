"""Per-game outcomes of a cell as bit masks, one block of seeds at a time: what pairing reads.

Every cell of a sweep (and every night of the nightly suite) plays game i with seed
`seed + i`, so two cells, or two nights, can be compared game by game: only the games
whose outcome differs carry information about the difference (McNemar), which is far
less noisy than comparing two independent rates. Both paired comparisons read the games
through this module: a sweep's cells against their base cell (paired.py, block by block,
never holding the sweep) and tonight against last night (drift.py, from the outcomes
stored with each night).

A chunk result is *transposed* into an `OutcomeBlock`: per event, one bit mask over the
block's games (bit k is game k of the block), plus the games' lengths. Events (`Key`):

- ("won", "<seat>"): the seat won; a unit's (a team's) mask is the OR of its seats';
- ("drawn",), ("capped",): nobody won; the turn cap ended the game (rulings G-5);
- ("sat", name, label), ("group", name, label): a seat labelled `label` in the facts'
  breakdown `name` (e.g. cult Rat) sat in the game, and won it; ("twice", name, label):
  two seats or more had that label (then the game is not one trial of that label);
- ("played", label): the card or agenda was played in the game.

So a cell's per-game data costs one bit per game and event plus its lengths (an int32
each); the blocks are the sweep's chunks, which every night of the suite cuts at the same
seeds, so two nights pair block against block.

A night's outcomes are read as a stream (`OutcomeSource`): every cell's blocks in (cell
label, first seed) order, with the layout (which blocks each cell has) known before the
first block. Tonight streams from the sweep's chunk results in Redis (`SweepOutcomes`),
last night from its file (`night.StoredOutcomes`), a night run in-process from memory
(`HeldOutcomes`); comparing two nights and storing one hold a block at a time, so their
memory grows with cells and events, not with games.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .plan import chunks, game_seed
from .simulate import unpack
from .spec import SweepSpec

if TYPE_CHECKING:
    from .store import SweepStore

# An event whose per-game indicator is a bit: ("won", "0"), ("group", "cult", "Rat"), ...
Key = tuple[str, ...]
DRAWN: Key = ("drawn",)
CAPPED: Key = ("capped",)


@dataclass
class OutcomeBlock:
    """One chunk of a cell, transposed: bit k of `masks[key]` is game k of the block (seed
    `start + k`). An event that never happened in the block has no mask (0). `facts` says
    whether the chunk carried per-game facts (groups, plays): without them, the absence of
    a group or played mask means "not recorded", not "did not happen"."""

    start: int  # seed of the block's first game
    games: int
    turns: array  # array("i"): each game's length in turns
    masks: dict[Key, int]
    facts: bool = True

    def mask(self, key: Key) -> int:
        return self.masks.get(key, 0)

    def won(self, seats: Iterable[int]) -> int:
        """The games that any of `seats` (a seat, or a team's seats) won."""
        out = 0
        for s in seats:
            out |= self.masks.get(("won", str(s)), 0)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "games": self.games,
            "turns": self.turns.tolist(),
            "masks": [[list(k), format(m, "x")] for k, m in sorted(self.masks.items())],
            "facts": self.facts,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutcomeBlock:
        return cls(
            int(data["start"]),
            int(data["games"]),
            array("i", data["turns"]),
            {tuple(k): int(m, 16) for k, m in data["masks"]},
            bool(data["facts"]),
        )


def transpose(result: dict[str, Any], first_seed: int) -> OutcomeBlock:
    """One chunk result (columnar lists of its games) as the bit masks of its events."""
    facts = result.get("facts") or []
    masks: defaultdict[Key, int] = defaultdict(int)
    winners, capped = result["winners"], result["capped"]
    # The keys, made once a chunk rather than once a game (this loop is the sweep finish's
    # and the night's hot path).
    seat_keys: dict[int, Key] = {}
    group_keys: dict[tuple[str, str], tuple[Key, Key]] = {}
    played_keys: dict[str, Key] = {}
    for k in range(result["games"]):
        bit = 1 << k
        won = winners[k]
        if not won:
            masks[DRAWN] |= bit
        for s in won:
            key = seat_keys.get(s) or seat_keys.setdefault(s, ("won", str(s)))
            masks[key] |= bit
        if capped[k]:
            masks[CAPPED] |= bit
        if not facts:
            continue
        fact = facts[k]
        for name, labels in fact.get("groups", {}).items():
            for s, label in enumerate(labels):
                pair = group_keys.get((name, label))
                if pair is None:
                    pair = group_keys[(name, label)] = (("sat", name, label), ("group", name, label))
                masks[pair[0]] |= bit
                if s in won:
                    masks[pair[1]] |= bit
            if len(set(labels)) < len(labels):
                for label in {lab for lab in labels if labels.count(lab) > 1}:
                    masks[("twice", name, label)] |= bit
        for label in fact.get("played", {}):
            key = played_keys.get(label) or played_keys.setdefault(label, ("played", label))
            masks[key] |= bit
    return OutcomeBlock(first_seed, result["games"], array("i", result["turns"]), dict(masks), bool(facts))


@dataclass
class CellOutcomes:
    """One cell's games as its blocks in seed order."""

    blocks: list[OutcomeBlock] = field(default_factory=list)

    def __len__(self) -> int:
        return sum(b.games for b in self.blocks)

    def layout(self) -> list[tuple[int, int]]:
        """(first seed, games) of every block: two cells pair block by block when equal."""
        return [(b.start, b.games) for b in self.blocks]


# (first seed, games) of each block of a cell, in seed order.
Layout = list[tuple[int, int]]


class OutcomeSource:
    """A night's per-game outcomes as a stream: every cell's blocks in (label, first seed)
    order. Two sources with the same layout for a cell pair block against block."""

    def layout(self) -> dict[str, Layout]:
        raise NotImplementedError

    def blocks(self) -> Iterator[tuple[str, OutcomeBlock]]:
        raise NotImplementedError


class HeldOutcomes(dict[str, "CellOutcomes"], OutcomeSource):
    """Outcomes held in memory, by cell label: a night run in-process, tests, the bench."""

    def layout(self) -> dict[str, Layout]:
        return {label: cell.layout() for label, cell in self.items()}

    def blocks(self) -> Iterator[tuple[str, OutcomeBlock]]:
        for label in sorted(self):
            for block in self[label].blocks:
                yield label, block


class SweepOutcomes(OutcomeSource):
    """A finished sweep's outcomes read from its chunk results in Redis, a few chunks at a
    time (the chunks present: a sweep judged unfinished has fewer blocks)."""

    BATCH = 32  # chunks fetched per round trip

    def __init__(self, store: SweepStore, sweep_id: str, spec: SweepSpec) -> None:
        self.store, self.sweep_id, self.spec = store, sweep_id, spec
        present = store.chunk_ids(sweep_id)
        labels = {cell.index: cell.label for cell in spec.cells()}
        self._chunks: dict[str, list[tuple[str, int, int]]] = {}
        for chunk in chunks(spec):  # block-major; each cell's chunks come in seed order
            if chunk.id in present:
                entry = (chunk.id, game_seed(spec, chunk.start), chunk.games)
                self._chunks.setdefault(labels[chunk.cell], []).append(entry)

    def layout(self) -> dict[str, Layout]:
        return {label: [(start, games) for _id, start, games in c] for label, c in self._chunks.items()}

    def blocks(self) -> Iterator[tuple[str, OutcomeBlock]]:
        for label in sorted(self._chunks):
            entries = self._chunks[label]
            for i in range(0, len(entries), self.BATCH):
                batch = entries[i : i + self.BATCH]
                blobs = self.store.chunk_blobs_of(self.sweep_id, [e[0] for e in batch])
                for (chunk_id, start, _games), blob in zip(batch, blobs, strict=True):
                    if blob is None:
                        raise LookupError(f"sweep {self.sweep_id}: chunk {chunk_id} is gone from Redis")
                    yield label, transpose(unpack(blob), start)


def from_chunk_results(spec: SweepSpec, results: Iterable[dict[str, Any]]) -> dict[int, CellOutcomes]:
    """Cell index -> its games, from the chunk results of a sweep in any order.

    `results` may be a stream (chunks read from Redis one at a time): each is transposed
    and dropped, so memory holds the bit masks, never the chunks."""
    out: dict[int, CellOutcomes] = {cell.index: CellOutcomes() for cell in spec.cells()}
    for res in results:
        out[res["cell"]].blocks.append(transpose(res, game_seed(spec, res["start"])))
    for cell in out.values():
        cell.blocks.sort(key=lambda b: b.start)
    return out


def unit_masks(block: OutcomeBlock, units: Sequence[tuple[str, Sequence[int]]]) -> dict[Key, int]:
    """("unit", name) -> the games the unit (a seat, or a team) won, for `units` as
    `units.tested_units` gives them."""
    return {("unit", name): block.won(seats) for name, seats in units}
