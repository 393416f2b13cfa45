"""Per-chunk partial aggregates: counts and sums that merge associatively.

Aggregation folds each chunk result into one small `CellPartial` per cell and drops the
chunk, so its memory grows with cells (and distinct game lengths), never with games: a
10-million-game night aggregates in the same few megabytes as a thousand-game sweep. Every
field is a count, a sum of whole numbers, or a "first game by index" pick, so merging is
associative and commutative: chunks can be folded in any order, on any process, and in
any grouping (a worker could fold its own chunks and ship partials) with identical
results — no floating-point sum depends on the order.

Game lengths are kept as a histogram of exact turn counts (a turn count is a small whole
number, capped by `max_turns`), from which the mean, its interval, quantiles, range and
the plotted histogram are computed exactly as from the full list.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .homogeneity import stratum_key
from .spec import Cell, SweepSpec

Z95 = 1.959963984540054


# The flat label -> count fields, merged and stored alike.
_COUNTERS = (
    "bot_apps",
    "bot_wins",
    "played_games",
    "played_seats",
    "played_wins",
    "outcome_met",
    "outcome_tried",
    "winner_sets",
)


def _nested() -> defaultdict[str, Counter[str]]:
    return defaultdict(Counter)


@dataclass
class CellPartial:
    """Everything the report needs of some games of one cell, as counts and sums."""

    seats: int
    games: int = 0
    slots: int = 0  # winner slots handed out
    draws: int = 0
    capped: int = 0
    decisions: int = 0
    turns_total: int = 0
    wins: list[int] = field(default_factory=list)
    turns: Counter[int] = field(default_factory=Counter)  # turn count -> games
    bot_apps: Counter[str] = field(default_factory=Counter)
    bot_wins: Counter[str] = field(default_factory=Counter)
    group_apps: defaultdict[str, Counter[str]] = field(default_factory=_nested)
    group_wins: defaultdict[str, Counter[str]] = field(default_factory=_nested)
    # per group, games by stratum (labels by seat, winners): the homogeneity test's strata
    group_strata: defaultdict[str, Counter[str]] = field(default_factory=_nested)
    played_games: Counter[str] = field(default_factory=Counter)
    played_seats: Counter[str] = field(default_factory=Counter)
    played_wins: Counter[str] = field(default_factory=Counter)
    outcome_met: Counter[str] = field(default_factory=Counter)  # e.g. a Tricky agenda: met
    outcome_tried: Counter[str] = field(default_factory=Counter)  # ... and judged
    # games by their exact set of winning seats ("0,2"; "" a draw): any grouping of seats
    # into teams is counted from it, so the partial needs no knowledge of partnerships
    winner_sets: Counter[str] = field(default_factory=Counter)
    # (game index, winners, turns) of the first game, and of each seat's first win
    first_game: tuple[int, list[int], int] | None = None
    first_win: dict[int, tuple[int, list[int], int]] = field(default_factory=dict)
    chunks: int = 0  # run info, not aggregates: chunks folded and their simulation seconds
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if not self.wins:
            self.wins = [0] * self.seats

    def add_chunk(self, cell: Cell, result: dict[str, Any]) -> None:
        """Fold one chunk result of this cell in."""
        facts = result.get("facts") or []
        self.chunks += 1
        self.seconds += result.get("seconds", 0.0)
        for k in range(result["games"]):
            index = result["start"] + k
            won = result["winners"][k]
            turns = result["turns"][k]
            self.games += 1
            self.slots += len(won)
            self.draws += not won
            self.capped += result["capped"][k]
            self.decisions += result["decisions"][k]
            self.turns_total += turns
            self.turns[turns] += 1
            won_set = set(won)
            self.winner_sets[",".join(str(s) for s in sorted(won_set))] += 1
            game = (index, list(won), turns)
            if self.first_game is None or index < self.first_game[0]:
                self.first_game = game
            for s in won:
                self.wins[s] += 1
                if s not in self.first_win or index < self.first_win[s][0]:
                    self.first_win[s] = game
            if cell.rotates:
                for s, bot in enumerate(cell.seat_bots(index)):
                    self.bot_apps[bot] += 1
                    self.bot_wins[bot] += s in won_set
            if facts:
                fact = facts[k]
                for name, labels in fact.get("groups", {}).items():
                    self.group_strata[name][stratum_key(labels, len(won_set))] += 1
                    for s, label in enumerate(labels):
                        self.group_apps[name][label] += 1
                        self.group_wins[name][label] += s in won_set
                played_games, played_seats, played_wins = (
                    self.played_games,
                    self.played_seats,
                    self.played_wins,
                )
                for label, seats in fact.get("played", {}).items():
                    played_games[label] += 1
                    played_seats[label] += len(seats)
                    for s in seats:
                        if s in won_set:
                            played_wins[label] += 1
                for label, (met, tried) in fact.get("outcomes", {}).items():
                    self.outcome_met[label] += met
                    self.outcome_tried[label] += tried

    def merge(self, other: CellPartial) -> CellPartial:
        """Add `other` into this partial (associative, commutative); returns self."""
        for name in ("games", "slots", "draws", "capped", "decisions", "turns_total", "chunks", "seconds"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.wins = [a + b for a, b in zip(self.wins, other.wins, strict=True)]
        for name in ("turns", *_COUNTERS):
            getattr(self, name).update(getattr(other, name))
        for name in ("group_apps", "group_wins", "group_strata"):
            mine = getattr(self, name)
            for group, counts in getattr(other, name).items():
                mine[group].update(counts)
        if other.first_game is not None and (
            self.first_game is None or other.first_game[0] < self.first_game[0]
        ):
            self.first_game = other.first_game
        for s, game in other.first_win.items():
            if s not in self.first_win or game[0] < self.first_win[s][0]:
                self.first_win[s] = game
        return self

    # --- stored form (a worker stores each chunk's partial beside its result) ------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": self.seats,
            "counts": [self.games, self.slots, self.draws, self.capped, self.decisions, self.turns_total],
            "wins": self.wins,
            "turns": [[v, c] for v, c in self.turns.items()],
            "bot_apps": self.bot_apps,
            "bot_wins": self.bot_wins,
            "group_apps": self.group_apps,
            "group_wins": self.group_wins,
            "group_strata": self.group_strata,
            "played_games": self.played_games,
            "played_seats": self.played_seats,
            "played_wins": self.played_wins,
            "outcome_met": self.outcome_met,
            "outcome_tried": self.outcome_tried,
            "winner_sets": self.winner_sets,
            "first_game": self.first_game,
            "first_win": [[s, g] for s, g in self.first_win.items()],
            "run": [self.chunks, self.seconds],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CellPartial:
        part = cls(d["seats"])
        part.games, part.slots, part.draws, part.capped, part.decisions, part.turns_total = d["counts"]
        part.wins = list(d["wins"])
        part.turns = Counter({v: c for v, c in d["turns"]})
        for name in _COUNTERS:
            setattr(part, name, Counter(d.get(name, {})))
        for name in ("group_apps", "group_wins", "group_strata"):
            nested = getattr(part, name)
            for group, counts in d.get(name, {}).items():  # strata: absent from older partials
                nested[group] = Counter(counts)
        part.first_game = tuple(d["first_game"]) if d["first_game"] else None
        part.first_win = {s: tuple(g) for s, g in d["first_win"]}
        part.chunks, part.seconds = d["run"]
        return part

    def team_wins(self, teams: list[tuple[int, ...]] | list[list[int]]) -> list[int]:
        """Games won by each team (a team wins a game when any of its seats is a winner)."""
        out = [0] * len(teams)
        for key, count in self.winner_sets.items():
            won = {int(s) for s in key.split(",")} if key else set()
            for t, seats in enumerate(teams):
                if not won.isdisjoint(seats):
                    out[t] += count
        return out

    # --- game length, exactly as from the full list of lengths ---------------------------
    def _nth(self, n: int) -> int:
        """The n-th smallest game length (0-based)."""
        seen = 0
        for value in sorted(self.turns):
            seen += self.turns[value]
            if n < seen:
                return value
        raise IndexError(n)

    def length_quantile(self, fraction: float) -> float:
        """Linear-interpolation quantile (numpy's default), as `stats.quantile` on the sorted list."""
        if not self.games:
            return 0.0
        pos = (self.games - 1) * fraction
        lo = math.floor(pos)
        hi = min(lo + 1, self.games - 1)
        a, b = self._nth(lo), self._nth(hi)
        return a + (b - a) * (pos - lo)

    def length_mean_interval(self, z: float = Z95) -> tuple[float, float, float]:
        """Mean length and its normal interval (sample variance from the counts)."""
        n = self.games
        if n == 0:
            return 0.0, 0.0, 0.0
        mean = self.turns_total / n
        if n == 1:
            return mean, mean, mean
        var = sum(c * (v - mean) ** 2 for v, c in self.turns.items()) / (n - 1)
        half = z * math.sqrt(var / n)
        return mean, mean - half, mean + half

    def length_sd(self) -> float:
        """Sample standard deviation of the game lengths (0 for fewer than two games)."""
        n = self.games
        if n < 2:
            return 0.0
        mean = self.turns_total / n
        return math.sqrt(sum(c * (v - mean) ** 2 for v, c in self.turns.items()) / (n - 1))

    def length_histogram(self, bins: int = 20) -> dict[str, list[int]]:
        """Equal-width bins over [min, max], as `stats.histogram` on the list of lengths."""
        if not self.turns:
            return {"edges": [], "counts": []}
        lo, hi = min(self.turns), max(self.turns)
        width = max(1, math.ceil((hi - lo + 1) / bins))
        nbins = max(1, math.ceil((hi - lo + 1) / width))
        counts = [0] * nbins
        for value, c in self.turns.items():
            counts[(value - lo) // width] += c
        return {"edges": [lo + i * width for i in range(nbins + 1)], "counts": counts}


def fold(spec: SweepSpec, results: Iterable[dict[str, Any]]) -> dict[int, CellPartial]:
    """Every cell's partial from a stream of chunk results, holding one chunk at a time."""
    cells = spec.cells()
    partials = {cell.index: CellPartial(cell.players) for cell in cells}
    for result in results:
        partials[result["cell"]].add_chunk(cells[result["cell"]], result)
    return partials


def of_chunk(spec: SweepSpec, result: dict[str, Any]) -> CellPartial:
    """The partial of one chunk result (what a worker stores beside the result)."""
    cell = spec.cells()[result["cell"]]
    part = CellPartial(cell.players)
    part.add_chunk(cell, result)
    return part


def merge_all(spec: SweepSpec, partials: Iterable[tuple[int, CellPartial]]) -> dict[int, CellPartial]:
    """Every cell's merged partial from a stream of (cell, chunk partial)."""
    merged = {cell.index: CellPartial(cell.players) for cell in spec.cells()}
    for cell, part in partials:
        merged[cell].merge(part)
    return merged
