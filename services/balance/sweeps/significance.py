"""One Benjamini-Hochberg family per report, and what "significant" means in it.

Every balance test of every cell (wins across seats or teams, across cults...) and every
paired comparison of a cell with its base cell is one hypothesis of a single family; BH at
q = 0.05 runs once over all of them. No question enters twice: bot-strength tests stay
out (a heuristic is meant to beat random bots), a team game tests teams instead of seats
(and not its "team" group again), and with two seats or teams only the first is compared.

"Significant" (and a cell's flag) means exactly "rejected by BH in this family": the
adjusted p-value is at most q. A rate whose own interval misses the fair share is only
marked *outside*, an indication that is not a finding.
"""

from __future__ import annotations

from typing import Any

from services.engines.core.stats import benjamini_hochberg

from .paired import sentence

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
    for c in aggregates["cells"]:
        c["flags"] = sorted(n for n, t in c["tests"].items() if t["flag"])
        c["flagged"] = bool(c["flags"])
        unit = c["tests"].get("team") or c["tests"].get("seat")
        fsa = c["first_seat_advantage"]
        fsa["significant"] = bool(unit and unit["flag"])
        fsa["p_adj"] = unit["p_adj"] if unit else 1.0
    for row in paired:
        row["sentence"] = sentence(row)
    aggregates["tests"] = {
        "method": "benjamini-hochberg",
        "q": q,
        "family_size": len(family),
        "paired_in_family": len(paired),
        "flagged": flagged,
    }
