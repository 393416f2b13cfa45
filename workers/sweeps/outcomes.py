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
each), whatever the number of cells and cards; the blocks are the sweep's chunks, which
every night of the suite cuts at the same seeds, so two nights pair block against block.
"""

from __future__ import annotations

from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .plan import game_seed
from .spec import SweepSpec

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

    @property
    def facts(self) -> bool:
        """Whether every block recorded the per-game facts (groups, plays)."""
        return bool(self.blocks) and all(b.facts for b in self.blocks)

    def to_dict(self) -> dict[str, Any]:
        return {"blocks": [b.to_dict() for b in self.blocks]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellOutcomes:
        return cls([OutcomeBlock.from_dict(b) for b in data["blocks"]])


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
