"""What else a tuned config changes: every standard metric against the printed rules, paired.

A confirmation answers "does the chosen config meet its targets?"; a designer also asks
"and what did it cost?". This table answers that on the confirmation games themselves,
where the candidate and the rules as printed were played on the same seeds: every seat's
win rate, the games won by each group label (a cult, a team), the draw and turn-cap rates,
every card's (or agenda's) play rate, each a per-game event compared by McNemar's test on
the games where it happened under one rule set only, with the paired Wald interval of the
difference; and the mean length by the paired t-test on the per-seed differences
(`services/engines/core/stats.py`). The rows of one candidate form one Benjamini-Hochberg
family (q = 0.05): `significant` means rejected in it.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from services.balance.sweeps.outcomes import CellOutcomes, Key
from services.engines.core import stats

FDR_Q = 0.05


def _metric(key: Key) -> str | None:
    """The words of an event's rate, or None for events that are not a standard metric
    (which labels sat in the game: a game fact, not an outcome)."""
    kind = key[0]
    if kind == "won":
        return f"seat {key[1]} win rate"
    if kind == "drawn":
        return "draw rate"
    if kind == "capped":
        return "turn-cap rate"
    if kind == "group":
        return f"games won by a {key[2]} seat ({key[1]})"
    if kind == "played":
        return f"play rate of {key[1]}"
    return None


def side_effects(base: CellOutcomes, cand: CellOutcomes, table: str) -> list[dict[str, Any]]:
    """Every standard metric of `cand` against `base`, paired on their shared seeds (the
    two cells of one confirmation sweep: the same blocks of seeds)."""
    by_start = {b.start: b for b in base.blocks}
    counts: defaultdict[Key, list[int]] = defaultdict(lambda: [0, 0, 0])  # a_only, b_only, both
    n = 0
    sum_a = sum_b = sum_sq = 0
    for blk in cand.blocks:
        ref = by_start.get(blk.start)
        if ref is None or ref.games != blk.games:
            continue
        n += blk.games
        for key in set(ref.masks) | set(blk.masks):
            if _metric(key) is None:
                continue
            a, b = ref.mask(key), blk.mask(key)
            c = counts[key]
            c[0] += (a & ~b).bit_count()
            c[1] += (b & ~a).bit_count()
            c[2] += (a & b).bit_count()
        for x, y in zip(ref.turns, blk.turns, strict=True):
            sum_a += x
            sum_b += y
            sum_sq += (y - x) ** 2
    rows: list[dict[str, Any]] = []
    if n == 0:
        return rows
    for key in sorted(counts):
        a_only, b_only, both = counts[key]
        comp = stats.paired_rates(a_only, b_only, both, n - a_only - b_only - both)
        rows.append(_row(_metric(key) or "", "rate", table, comp))
    if n >= 2:
        rows.append(
            _row("mean length", "turns", table, stats.paired_means_from_sums(n, sum_a, sum_b, sum_sq))
        )
    return rows


def _row(metric: str, kind: str, table: str, comp: stats.Comparison) -> dict[str, Any]:
    return {
        "metric": metric,
        "kind": kind,
        "table": table,
        "printed_rules": round(comp.before, 6),
        "value": round(comp.after, 6),
        "difference": round(comp.difference, 6),
        "lo": round(comp.lo, 6),
        "hi": round(comp.hi, 6),
        "p": comp.p,
        "test": comp.test,
        "games": comp.n,
    }


def adjust(rows: list[dict[str, Any]], q: float = FDR_Q) -> list[dict[str, Any]]:
    """Benjamini-Hochberg over the rows (in place), flag the rejected ones and word them;
    returns the rows, significant ones first by size of change."""
    if not rows:
        return rows
    rejected, adjusted = stats.benjamini_hochberg([r["p"] for r in rows], q)
    for row, rej, adj in zip(rows, rejected, adjusted, strict=True):
        row["p_adj"] = round(adj, 6)
        row["significant"] = bool(rej)
        row["text"] = sentence(row)
    scale = {"rate": 100.0, "turns": 1.0}
    rows.sort(key=lambda r: (not r["significant"], -abs(r["difference"]) * scale[r["kind"]]))
    return rows


def sentence(row: dict[str, Any]) -> str:
    """One row in a designer's words."""
    if row["kind"] == "turns":
        what = (
            f"mean length {row['value']:.1f} turns against {row['printed_rules']:.1f} "
            f"({row['difference']:+.1f} turns, 95% interval {row['lo']:+.1f} to {row['hi']:+.1f})"
        )
    else:
        what = (
            f"{row['metric']} {100 * row['value']:.1f}% against {100 * row['printed_rules']:.1f}% "
            f"({100 * row['difference']:+.1f} points, 95% interval {100 * row['lo']:+.1f} to {100 * row['hi']:+.1f})"
        )
    verdict = "significant" if row["significant"] else "not significant"
    return f"{row['table']}: {what}, adjusted p {row['p_adj']:.2g}: {verdict}"
