"""Every grid cell against the base cell on the same seeds: "what does this rule change do?"

Cells share seeds (game i of every cell uses seed + i), so a variant and the base rules
are compared game by game: per seat (per team where seats are partners) and per group
label (e.g. "a Rat cultist wins"), the share of games won under each, McNemar's test on
the games whose outcome differs, and the paired 95 % interval of the difference
(`services.engines.core.stats.paired_rates`). The base cell of a cell is the one with the
same player count and line-up under the first grid entry.

The comparisons join the report's one Benjamini-Hochberg family (significance.py);
`sentence` then says each in a designer's words.
"""

from __future__ import annotations

from typing import Any

from services.engines.core.stats import Comparison, paired_rates_from

from .outcomes import CellOutcomes
from .spec import SweepSpec
from .units import tested_units

# Group breakdowns that measure the bots (who sits with whom), or repeat the win units.
SKIP_GROUPS = frozenset({"partnership", "team"})
DIGITS = 6


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


def compare_with_base(spec: SweepSpec, outcomes: dict[int, CellOutcomes]) -> list[dict[str, Any]]:
    """One row per (cell, metric): base value, cell value, difference, interval, raw p."""
    cells = spec.cells()
    gspec = spec.game_spec
    rows: list[dict[str, Any]] = []
    for index, base_index in base_cells(spec).items():
        cell, base = cells[index], cells[base_index]
        here, there = outcomes.get(index), outcomes.get(base_index)
        if not here or not there:
            continue
        common = sorted(set(here.seeds) & set(there.seeds))
        if not common:
            continue
        a, b = there.restricted(common), here.restricted(common)
        metrics: list[tuple[str, str, Comparison]] = []
        for name, seats in tested_units(gspec, cell.players):
            metrics.append((f"{name} win rate", name, paired_rates_from(a.won(seats), b.won(seats))))
        group_names = sorted({n for g in a.groups + b.groups for n in g} - SKIP_GROUPS)
        for name in group_names:
            for label in sorted(set(a.group_labels(name)) | set(b.group_labels(name))):
                who = f"a {label} {name}" if name != "cult" else f"the {label} cult"
                comp = paired_rates_from(a.group_won(name, label), b.group_won(name, label))
                metrics.append((f"{name} {label} wins (share of games)", who, comp))
        for metric, who, comp in metrics:
            rows.append(
                {
                    "cell": index,
                    "label": cell.label,
                    "variant": cell.variant,
                    "players": cell.players,
                    "base_cell": base_index,
                    "base_variant": base.variant,
                    "metric": metric,
                    "who": who,
                    "games": comp.n,
                    "base": round(comp.before, DIGITS),
                    "value": round(comp.after, DIGITS),
                    "difference": round(comp.difference, DIGITS),
                    "lo": round(comp.lo, DIGITS),
                    "hi": round(comp.hi, DIGITS),
                    "p": comp.p,
                    "test": comp.test,
                }
            )
    return rows


def points(x: float) -> str:
    return f"{100 * x:.1f}"


def sentence(row: dict[str, Any]) -> str:
    """A comparison in a designer's words (after BH has set `p_adj`)."""
    d = row["difference"]
    if d == 0:
        change = "exactly as often"
    else:
        change = f"{points(abs(d))} points {'more' if d > 0 else 'less'} often"
    return (
        f"{row['who']} wins {change} under `{row['variant']}` than under {row['base_variant']} "
        f"({points(row['value'])}% against {points(row['base'])}%, {row['players']}p), "
        f"95% interval {points(row['lo'])} to {points(row['hi'])} points, adjusted p {row['p_adj']:.3g}"
    )
