"""Per-game outcomes of a cell, keyed by seed: the input of every paired comparison.

Every cell of a sweep (and every night of the nightly suite) plays game i with seed
`seed + i`, so two cells, or two nights, can be compared game by game: only the games
whose outcome differs carry information about the difference (McNemar), which is far
less noisy than comparing two independent rates. The nightly's night-against-night
comparison (drift.py) reads the games through `CellOutcomes`, stored with each night; a
sweep's cells against their base cell do not hold the games at all: paired.py counts them
block by block.

`from_chunk_results` reads today's chunk results (columnar lists per chunk). The rows
hold only what the paired metrics use: winners, length, the turn-cap flag and the facts'
per-seat group labels (cult, team...).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .plan import game_seed
from .spec import SweepSpec


@dataclass
class CellOutcomes:
    """One cell's games in seed order: column i of every list is the game with seeds[i]."""

    seeds: list[int] = field(default_factory=list)
    winners: list[list[int]] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    capped: list[bool] = field(default_factory=list)
    groups: list[dict[str, list[str]]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.seeds)

    def add(
        self, seed: int, winners: Sequence[int], turns: int, capped: bool, groups: dict[str, list[str]]
    ) -> None:
        self.seeds.append(seed)
        self.winners.append(list(winners))
        self.turns.append(int(turns))
        self.capped.append(bool(capped))
        self.groups.append(groups)

    def restricted(self, seeds: Iterable[int]) -> CellOutcomes:
        """The games of `seeds`, in that order (for pairing two sides on common seeds)."""
        at = {s: i for i, s in enumerate(self.seeds)}
        out = CellOutcomes()
        for s in seeds:
            i = at[s]
            out.add(s, self.winners[i], self.turns[i], self.capped[i], self.groups[i])
        return out

    # Per-game indicators: the paired metrics.
    def won(self, seats: Sequence[int]) -> list[bool]:
        """Whether any of `seats` (a seat, or a team's seats) won each game."""
        wanted = set(seats)
        return [bool(wanted.intersection(w)) for w in self.winners]

    def drawn(self) -> list[bool]:
        return [not w for w in self.winners]

    def group_won(self, name: str, label: str) -> list[bool]:
        """Whether a seat labelled `label` in breakdown `name` (e.g. cult Rat) won each game."""
        out = []
        for w, g in zip(self.winners, self.groups, strict=True):
            labels = g.get(name, [])
            out.append(any(s < len(labels) and labels[s] == label for s in w))
        return out

    def group_labels(self, name: str) -> list[str]:
        return sorted({lab for g in self.groups for lab in g.get(name, [])})

    def to_dict(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "winners": self.winners,
            "turns": self.turns,
            "capped": self.capped,
            "groups": self.groups,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellOutcomes:
        return cls(
            list(data["seeds"]),
            [list(w) for w in data["winners"]],
            list(data["turns"]),
            [bool(c) for c in data["capped"]],
            list(data.get("groups") or [{} for _ in data["seeds"]]),
        )


def from_chunk_results(spec: SweepSpec, results: Iterable[dict[str, Any]]) -> dict[int, CellOutcomes]:
    """Cell index -> its games in seed order, from the chunk results of a sweep."""
    out: dict[int, CellOutcomes] = {cell.index: CellOutcomes() for cell in spec.cells()}
    for res in sorted(results, key=lambda r: (r["cell"], r["start"])):
        facts = res.get("facts") or []
        cell = out[res["cell"]]
        for k in range(res["games"]):
            groups = dict(facts[k].get("groups", {})) if facts else {}
            cell.add(
                game_seed(spec, res["start"] + k),
                res["winners"][k],
                res["turns"][k],
                res["capped"][k],
                groups,
            )
    return out
