"""Every grid cell against the base cell on the same seeds: "what does this rule change do?"

Cells share seeds (game i of every cell uses seed + i), so a variant and the base rules
are compared game by game. Every comparison is paired:

- win rate per seat (per team where seats are partners), and per group label ("the Rat
  cult wins"), as the share of games won: McNemar's test on the games whose outcome
  differs and the paired 95 % interval (`services.engines.core.stats.paired_rates`);
- play rate of every card (or agenda): the share of games in which it was played, again
  McNemar on the games where one side played it and the other did not;
- mean game length: the paired t-test on the per-seed differences of turns
  (`paired_means_from_sums`).

The base cell of a cell is the one with the same player count and line-up under the first
grid entry.

Memory grows with cells, not games: a sweep's chunks are cut at the same game indices in
every cell (plan.py), so the finish reads one block of game indices at a time (every
cell's chunk of that block), turns each chunk into bit masks of its events
(`outcomes.transpose`), counts each pair's discordant games (`pair_block`, which the
night-against-night drift uses too) and sums the length
differences into a `PairCounts`, and drops the block. Counts are whole numbers, so
merging blocks in any order gives exactly what one pass over every game gives.

The comparisons join the report's one Benjamini-Hochberg family (significance.py);
`sentence` then says each in a designer's words.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.engines.core.stats import Comparison, paired_means_from_sums, paired_rates

from .outcomes import Key, OutcomeBlock, transpose, unit_masks
from .plan import game_seed
from .spec import SweepSpec
from .units import tested_units

# Group breakdowns that measure the bots (who sits with whom), or repeat the win units.
SKIP_GROUPS = frozenset({"partnership", "team"})
DIGITS = 6


@dataclass
class PairCounts:
    """B against A over some shared seeds (a cell against its base cell, tonight against
    last night), as counts that add up.

    `tables[key]` is [games where only the base had the event, only the cell, both], per
    event of `outcomes.Key` and per win unit (("unit", "seat 0"), ("unit", "team 1")); the
    games where neither had it are `games` minus those. A key is listed once it was seen
    on either side (a card in play, a cult dealt), even if it never won."""

    games: int = 0
    tables: defaultdict[Key, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    turns_base: int = 0
    turns_cell: int = 0
    turns_sq_diff: int = 0  # sum over games of (cell's turns - base's turns)^2
    facts: bool = True  # every block on both sides recorded the per-game facts (groups, plays)

    def merge(self, other: PairCounts) -> PairCounts:
        """Add `other` in (associative, commutative: whole-number counts); returns self."""
        self.games += other.games
        for key, (a, b, both) in other.tables.items():
            mine = self.tables[key]
            mine[0] += a
            mine[1] += b
            mine[2] += both
        self.turns_base += other.turns_base
        self.turns_cell += other.turns_cell
        self.turns_sq_diff += other.turns_sq_diff
        self.facts = self.facts and other.facts
        return self

    def rates(self, key: Key) -> Comparison:
        a_only, b_only, both = self.tables[key]
        return paired_rates(a_only, b_only, both, self.games - a_only - b_only - both)


def base_cells(spec: SweepSpec) -> dict[int, int]:
    """Cell index -> index of its base cell (same players and line-up, first grid entry)."""
    cells = spec.cells()
    if not cells:
        return {}
    base_variant = cells[0].variant
    base = {(c.players, c.lineup): c.index for c in cells if c.variant == base_variant}
    return {
        c.index: base[(c.players, c.lineup)]
        for c in cells
        if c.variant != base_variant and (c.players, c.lineup) in base
    }


def pair_block(a: OutcomeBlock, b: OutcomeBlock, units: Sequence[tuple[str, Sequence[int]]]) -> PairCounts:
    """B against A over one block's shared seeds: per event (and per win unit of `units`),
    three popcounts. Used for a cell against its base cell and for tonight against last night."""
    n = min(a.games, b.games)  # the seeds both played
    every = (1 << n) - 1
    counts = PairCounts(games=n, facts=a.facts and b.facts)
    tables = counts.tables
    ma, mb = a.masks | unit_masks(a, units), b.masks | unit_masks(b, units)
    keys = ma.keys() | mb.keys()
    # A label that sat but never won still gets its (all-zero) row of wins.
    keys |= {("group", *k[1:]) for k in keys if k[0] == "sat"}
    for key in keys:
        if key[0] == "won":  # seats are compared as their units
            continue
        x, y = ma.get(key, 0) & every, mb.get(key, 0) & every
        tables[key] = [(x & ~y).bit_count(), (y & ~x).bit_count(), (x & y).bit_count()]
    ta, tb = a.turns[:n], b.turns[:n]
    counts.turns_base, counts.turns_cell = sum(ta), sum(tb)
    counts.turns_sq_diff = sum((y - x) * (y - x) for x, y in zip(ta, tb, strict=True))
    return counts


def count_block(spec: SweepSpec, block: Mapping[int, dict[str, Any]]) -> dict[int, PairCounts]:
    """Every cell's `PairCounts` against its base over one block of seeds.

    `block` maps cell index -> that cell's chunk result for the block (all cells' chunks
    of a block start at the same game index). A cell or base missing from the block adds
    nothing: only seeds both played are compared."""
    cells = spec.cells()
    gspec = spec.game_spec
    transposed: dict[int, OutcomeBlock] = {}

    def of(index: int) -> OutcomeBlock:
        if index not in transposed:
            transposed[index] = transpose(block[index], game_seed(spec, block[index]["start"]))
        return transposed[index]

    out: dict[int, PairCounts] = {}
    for index, base_index in base_cells(spec).items():
        if index not in block or base_index not in block:
            continue
        if block[index]["start"] != block[base_index]["start"]:
            raise ValueError(f"cells {index} and {base_index} given different blocks of seeds")
        units = tested_units(gspec, cells[index].players)
        out[index] = pair_block(of(base_index), of(index), units)
    return out


def count_blocks(spec: SweepSpec, blocks: Iterable[Mapping[int, dict[str, Any]]]) -> dict[int, PairCounts]:
    """Every cell's `PairCounts` over a stream of blocks, holding one block at a time."""
    total = {index: PairCounts() for index in base_cells(spec)}
    for block in blocks:
        for index, counts in count_block(spec, block).items():
            total[index].merge(counts)
    return total


def blocks_of(results: Iterable[dict[str, Any]]) -> list[dict[int, dict[str, Any]]]:
    """Chunk results already in memory, grouped into blocks (cell -> result) by first game."""
    by_start: dict[int, dict[int, dict[str, Any]]] = {}
    for res in results:
        by_start.setdefault(res["start"], {})[res["cell"]] = res
    return [by_start[start] for start in sorted(by_start)]


def compare_with_base(spec: SweepSpec, counts: Mapping[int, PairCounts]) -> list[dict[str, Any]]:
    """One row per (cell, metric): base value, cell value, difference, interval, raw p."""
    cells = spec.cells()
    gspec = spec.game_spec
    rows: list[dict[str, Any]] = []
    for index, base_index in base_cells(spec).items():
        cell, base = cells[index], cells[base_index]
        pc = counts.get(index)
        if pc is None or not pc.games:
            continue
        metrics: list[tuple[str, str, str, Comparison]] = []
        spread: dict[str, float] = {}  # metric -> discordant share (rates), sd of differences (length)

        def discordant(key: Any, pc: PairCounts = pc) -> float:
            a_only, b_only, _both = pc.tables[key]
            return (a_only + b_only) / pc.games

        for name, _seats in tested_units(gspec, cell.players):
            metrics.append((f"{name} win rate", "wins", name, pc.rates(("unit", name))))
            spread[f"{name} win rate"] = discordant(("unit", name))
        groups = sorted({k[1:] for k in pc.tables if k[0] == "group" and k[1] not in SKIP_GROUPS})
        for name, label in groups:
            who = f"a {label} {name}" if name != "cult" else f"the {label} cult"
            metrics.append(
                (f"{name} {label} wins (share of games)", "wins", who, pc.rates(("group", name, label)))
            )
            spread[f"{name} {label} wins (share of games)"] = discordant(("group", name, label))
        for label in sorted(k[1] for k in pc.tables if k[0] == "played"):
            metrics.append(
                (f"{label} play rate (share of games)", "played", label, pc.rates(("played", label)))
            )
            spread[f"{label} play rate (share of games)"] = discordant(("played", label))
        if pc.games > 1:
            length = paired_means_from_sums(pc.games, pc.turns_base, pc.turns_cell, pc.turns_sq_diff)
            metrics.append(("mean game length (turns)", "turns", "a game", length))
            mean_diff = (pc.turns_cell - pc.turns_base) / pc.games
            var = max(0.0, (pc.turns_sq_diff - pc.games * mean_diff * mean_diff) / (pc.games - 1))
            spread["mean game length (turns)"] = math.sqrt(var)
        for metric, kind, who, comp in metrics:
            rows.append(
                {
                    "cell": index,
                    "label": cell.label,
                    "variant": cell.variant,
                    "players": cell.players,
                    "base_cell": base_index,
                    "base_variant": base.variant,
                    "metric": metric,
                    "kind": kind,
                    "who": who,
                    "games": comp.n,
                    "base": round(comp.before, DIGITS),
                    "value": round(comp.after, DIGITS),
                    "difference": round(comp.difference, DIGITS),
                    "lo": round(comp.lo, DIGITS),
                    "hi": round(comp.hi, DIGITS),
                    "p": comp.p,
                    "test": comp.test,
                    # what the power figure needs (power.py): the discordant share, or the
                    # spread of the per-game length differences
                    ("sd_difference" if kind == "turns" else "discordant"): round(spread[metric], DIGITS),
                }
            )
    return rows


def points(x: float) -> str:
    return f"{100 * x:.1f}"


def sentence(row: dict[str, Any]) -> str:
    """A comparison in a designer's words (after BH has set `p_adj`)."""
    d = row["difference"]
    kind = row.get("kind", "wins")
    under = f"under `{row['variant']}` {'as' if d == 0 else 'than'} under {row['base_variant']}"
    tail = f", adjusted p {row['p_adj']:.3g}"
    if kind == "turns":
        change = "exactly as long" if d == 0 else f"{abs(d):.1f} turns {'longer' if d > 0 else 'shorter'}"
        return (
            f"a game lasts {change} {under} (mean {row['value']:.1f} against {row['base']:.1f} turns, "
            f"{row['players']}p), 95% interval {row['lo']:+.1f} to {row['hi']:+.1f} turns{tail}"
        )
    if d == 0:
        change = "exactly as often"
    else:
        change = f"{points(abs(d))} points {'more' if d > 0 else 'less'} often"
    verb = "is played in a game" if kind == "played" else "wins"
    return (
        f"{row['who']} {verb} {change} {under} "
        f"({points(row['value'])}% against {points(row['base'])}%, {row['players']}p), "
        f"95% interval {points(row['lo'])} to {points(row['hi'])} points{tail}"
    )
