"""One Benjamini-Hochberg family per report, and what "significant" means in it.

Every balance test of every cell (wins across seats or teams, across cults...) and every
paired comparison of a cell with its base cell is one hypothesis of a single family; BH at
q = 0.05 runs once over all of them. No question enters twice: bot-strength tests stay
out (a heuristic is meant to beat random bots), a team game tests teams instead of seats
(and not its "team" group again), and with two seats or teams only the first is compared.

"Significant" (and a cell's flag) means exactly "rejected by BH in this family": the
adjusted p-value is at most q. A cell is flagged when any of its tests is, its paired
comparisons with the base cell included (their names in `flags` begin "paired: ").
`verdict` is the report's first line: the largest significant effect, in words. A rate whose own interval misses the fair share is only
marked *outside*, an indication that is not a finding.
"""

from __future__ import annotations

from typing import Any

from services.engines.core.stats import benjamini_hochberg

from .paired import sentence
from .power import (
    POWER,
    bh_level,
    mde_one_rate,
    mde_paired_mean,
    mde_paired_rate,
    rounded,
)

FDR_Q = 0.05
DIGITS = 6


def apply_family(aggregates: dict[str, Any], q: float = FDR_Q) -> None:
    """Adjust, flag and label every test of `aggregates` in place (cells and `paired`)."""
    family: list[dict[str, Any]] = []
    owners: list[tuple[str, Any, str]] = []
    for c in aggregates["cells"]:
        for name, test in c["tests"].items():
            test["p_adj"], test["flag"] = 1.0, False
            if test.get("balance", True) and test["df"] > 0:
                family.append(test)
                owners.append(("cell", c["cell"], name))
    paired = aggregates.get("paired", [])
    for row in paired:
        row["p_adj"], row["significant"] = 1.0, False
        family.append(row)
        owners.append(("paired", row["cell"], row["metric"]))
    rejected, adjusted = benjamini_hochberg([t["p"] for t in family], q)
    flagged = []
    for test, owner, rej, adj in zip(family, owners, rejected, adjusted, strict=True):
        test["p_adj"] = round(adj, DIGITS)
        if owner[0] == "cell":
            test["flag"] = rej
        else:
            test["significant"] = rej
        if rej:
            test_name = owner[2] if owner[0] == "cell" else f"paired: {owner[2]}"
            flagged.append({"cell": owner[1], "test": test_name, "p": test["p"], "p_adj": test["p_adj"]})
    paired_flags: dict[int, list[str]] = {}
    for row in paired:
        if row["significant"]:
            paired_flags.setdefault(row["cell"], []).append(f"paired: {row['metric']}")
    for c in aggregates["cells"]:
        c["flags"] = sorted(n for n, t in c["tests"].items() if t["flag"]) + sorted(
            paired_flags.get(c["cell"], [])
        )
        c["flagged"] = bool(c["flags"])
        unit = c["tests"].get("team") or c["tests"].get("seat")
        fsa = c["first_seat_advantage"]
        fsa["significant"] = bool(unit and unit["flag"])
        fsa["p_adj"] = unit["p_adj"] if unit else 1.0
    for row in paired:
        row["sentence"] = sentence(row)
    aggregates["power"] = add_power(aggregates, bh_level(q, len(family)))
    aggregates["tests"] = {
        "method": "benjamini-hochberg",
        "q": q,
        "family_size": len(family),
        "paired_in_family": len(paired),
        "flagged": flagged,
    }
    aggregates["verdict"] = verdict(aggregates)


def add_power(aggregates: dict[str, Any], alpha: float) -> dict[str, Any]:
    """Set every test's `mde` (the smallest effect it finds with 80 % power after BH,
    power.py) and return the report's power summary: per metric, the MDE of its typical
    test (the median over cells), with the level and the power it is computed at."""
    by_metric: dict[str, list[float]] = {}

    def note(metric: str, value: float | None) -> None:
        if value is not None:
            by_metric.setdefault(metric, []).append(value)

    for c in aggregates["cells"]:
        fair, games = c["fair_share"], c["games"]
        for name, test in c["tests"].items():
            if name in ("seat", "team"):
                units = c["teams"] if name == "team" else c["seats"]
                f = units[0]["rate"] - units[0]["delta"] if units else fair
                test["mde"] = rounded(mde_one_rate(games, f, alpha))
                note(f"{name} win rate against its fair share", test["mde"])
            elif name.startswith("group:"):
                rows = c["groups"].get(name.split(":", 1)[1], [])
                apps = sorted(r["appearances"] for r in rows)
                n = apps[len(apps) // 2] if apps else 0
                test["mde"] = rounded(mde_one_rate(n, fair, alpha))
                note(f"{name.split(':', 1)[1]} win rate against the fair share", test["mde"])
    for row in aggregates.get("paired", []):
        if row.get("kind") == "turns":
            row["mde"] = rounded(mde_paired_mean(row["games"], row.get("sd_difference", 0.0), alpha))
            note("paired: mean game length (turns)", row["mde"])
        else:
            row["mde"] = rounded(mde_paired_rate(row["games"], row.get("discordant", 1.0), alpha))
            note(f"paired: {'play' if row.get('kind') == 'played' else 'win'} rate", row["mde"])
    summary = []
    for metric, values in sorted(by_metric.items()):
        values.sort()
        summary.append({"metric": metric, "tests": len(values), "mde": values[len(values) // 2],
                        "smallest": values[0], "largest": values[-1]})  # fmt: skip
    return {"power": POWER, "level": alpha, "by_metric": summary}


def _cell_effects(c: dict[str, Any]) -> list[tuple[float, str]]:
    """A flagged cell test's largest departure from the fair share, with its words."""
    out: list[tuple[float, str]] = []
    where = f"in cell {c['cell']} ({c['label']})"
    for name, test in c["tests"].items():
        if not test["flag"]:
            continue
        if name in ("seat", "team"):
            rows = [(f"{name} {r[name]}", r) for r in (c["seats"] if name == "seat" else c["teams"])]
        elif name.startswith("group:"):
            group = name.split(":", 1)[1]
            rows = [(f"the {r['label']} cult" if group == "cult" else f"a {r['label']} {group}", r)
                    for r in c["groups"].get(group, [])]  # fmt: skip
        else:
            continue
        if not rows:
            continue
        who, r = max(rows, key=lambda x: abs(x[1].get("delta", 0.0)))
        d = r.get("delta", 0.0)
        out.append((
            abs(d),
            f"{where}, {who} wins {100 * r['rate']:.1f}% of its games, {100 * abs(d):.1f} points "
            f"{'above' if d > 0 else 'below'} the fair share {100 * c['fair_share']:.1f}% "
            f"({name} test, adjusted p {test['p_adj']:.3g})",
        ))  # fmt: skip
    return out


def verdict(aggregates: dict[str, Any]) -> str:
    """One line: the largest significant effect of the report, or that there is none.

    Effects are ranked by size: a rate by its difference in points (a paired change, or a
    flagged cell's largest departure from the fair share), a game length by its relative
    change (10 % longer ranks with 10 points)."""
    effects: list[tuple[float, str]] = []
    for row in aggregates.get("paired", []):
        if not row.get("significant"):
            continue
        size = abs(row["difference"])
        if row.get("kind") == "turns":
            size = size / row["base"] if row["base"] else 0.0
        effects.append((size, row.get("sentence") or sentence(row)))
    for c in aggregates["cells"]:
        effects.extend(_cell_effects(c))
    tests = aggregates.get("tests", {})
    size, q = tests.get("family_size", 0), tests.get("q", FDR_Q)
    if not effects:
        return f"No significant effect: none of the {size} tests is rejected after Benjamini-Hochberg at q = {q}."
    best = max(effects, key=lambda e: e[0])[1]
    others = len(tests.get("flagged", [])) - 1
    more = f" ({others} more significant test{'s' if others != 1 else ''})" if others > 0 else ""
    return f"Largest significant effect: {best[0].upper() + best[1:]}{more}."
