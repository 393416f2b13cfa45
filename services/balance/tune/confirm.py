"""Proof, not a guess: the chosen configs played again on fresh seeds, against the printed rules.

The search picked its best config on the seeds it searched, so its estimates are
optimistic (the winner's curse: among many noisy estimates the best looks better than it
is). The confirmation plays the best config (and each Pareto point) on seeds the search
never touched (`seed + CONFIRM_OFFSET ...`), in one sweep together with the rules as
printed (the spec's fixed config alone, nothing searched), so every candidate is paired
game by game with the printed rules on the same deals:

- a seat's win rate: McNemar's test on the games one side won and the other did not, with
  the paired interval of the difference (`services/engines/core/stats.py`);
- the mean game length: the paired t-test on per-seed length differences;
- spreads and play rates: both values with their intervals (no paired test).

Each objective's verdict comes from the candidate's own 95 % interval on those fresh games
(`objectives.verdict`): a result whose interval leaves the target is reported as
`unproven` or `miss`, never as a success.
"""

from __future__ import annotations

from typing import Any

from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.outcomes import from_chunk_results
from services.balance.sweeps.records import outcomes_by_seed
from services.balance.sweeps.spec import SweepSpec, variant_label
from services.engines.core import stats

from . import guards as guards_mod
from . import objectives as obj_mod
from .evaluate import Runner
from .side_effects import adjust, side_effects
from .spec import Objective, TuneSpec

# Far beyond any search's seeds (a search's seeds span at most its budget, < 50M games).
CONFIRM_OFFSET = 1_000_000_000


def _turns_by_seed(sweep: SweepSpec, results: list[dict[str, Any]], cell: int) -> dict[int, int]:
    out = {}
    for res in results:
        if res["cell"] == cell:
            for k in range(res["games"]):
                out[sweep.seed + res["start"] + k] = res["turns"][k]
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _points(x: float) -> str:
    return f"{100 * x:+.1f} points"


def _describe(
    obj: Objective,
    words: str,
    m: obj_mod.Measure,
    base: obj_mod.Measure,
    comparison: stats.Comparison | None,
    verdict: str,
    table: str,
) -> str:
    """The confirmation of one objective in a designer's words."""
    fmt = _pct if obj.is_rate else (lambda v: f"{v:.1f} turns")
    subject = {
        "seat_rate": f"seat {obj.seat} wins",
        "seat_spread": "the seats' win rates spread",
        "group_spread": f"the {obj.group} win rates spread",
        "mean_length": "a game lasts on average",
        "play_rate": f"{obj.card} is played in",
    }[obj.metric]
    tail = " of games" if obj.metric == "play_rate" else ""
    text = (
        f"{table}with {words}, {subject} {fmt(m.value)}{tail} (95% interval {fmt(m.lo)}-{fmt(m.hi)}) "
        f"against {fmt(base.value)} under the rules as printed"
    )
    if comparison is not None:
        diff = _points if obj.is_rate else (lambda v: f"{v:+.1f} turns")
        lo_hi = (
            f"{100 * comparison.lo:+.1f} to {100 * comparison.hi:+.1f}"
            if obj.is_rate
            else f"{comparison.lo:+.1f} to {comparison.hi:+.1f}"
        )
        text += f" (difference {diff(comparison.difference)}, 95% interval {lo_hi}, {comparison.test} p {comparison.p:.2g})"
    return f"{text}; target {obj.target_words()}: {verdict}."


def confirm(
    spec: TuneSpec, candidates: list[dict[str, Any]], runner: Runner
) -> tuple[list[dict[str, Any]], int]:
    """Each candidate's confirmation (same order), and the games the confirmation played."""
    grid: list[dict[str, Any]] = [{}]
    for config in candidates:
        if config not in grid:
            grid.append(config)
    sweep = spec.sweep(grid, CONFIRM_OFFSET, spec.confirm, name=f"{spec.name}: confirmation")
    results = runner(sweep)
    cells = aggregate(sweep, results)["cells"]
    outcomes = from_chunk_results(sweep, results)
    tables = len(spec.table.cells())
    printed_cells = cells[:tables]
    # The rules as printed judged on the same fresh games: do they already meet every target
    # and keep every guard? Then nothing needs changing, whatever the search found.
    printed_verdicts = [
        obj_mod.verdict(obj, obj_mod.measure(obj, cell)) for cell in printed_cells for obj in spec.objectives
    ]
    printed_guards = guards_mod.check(spec.guards, printed_cells, printed_cells)
    printed_ok = obj_mod.worst(printed_verdicts) == "confirmed" and not guards_mod.broken(printed_guards)
    out = []
    for config in candidates:
        k = grid.index(config)
        words = variant_label(config)
        entries: list[dict[str, Any]] = []
        effects: list[dict[str, Any]] = []
        for t in range(tables):
            base_cell, cand_cell = cells[t], cells[k * tables + t]
            table = f"at {cand_cell['players']} players, {cand_cell['lineup_label']}: " if tables > 1 else ""
            if k:
                effects += side_effects(
                    outcomes[base_cell["cell"]], outcomes[cand_cell["cell"]], cand_cell["label"]
                )
            base_w = outcomes_by_seed(sweep, results, base_cell["cell"])
            cand_w = outcomes_by_seed(sweep, results, cand_cell["cell"])
            seeds = sorted(base_w)
            for obj in spec.objectives:
                m = obj_mod.measure(obj, cand_cell)
                base = obj_mod.measure(obj, base_cell)
                comparison = None
                if obj.metric == "seat_rate":
                    comparison = stats.paired_rates_from(
                        [obj.seat in base_w[s] for s in seeds], [obj.seat in cand_w[s] for s in seeds]
                    )
                elif obj.metric == "mean_length":
                    bt = _turns_by_seed(sweep, results, base_cell["cell"])
                    ct = _turns_by_seed(sweep, results, cand_cell["cell"])
                    comparison = stats.paired_means([bt[s] for s in seeds], [ct[s] for s in seeds])
                v = obj_mod.verdict(obj, m)
                entries.append(
                    {
                        "objective": obj.label,
                        "table": cand_cell["label"],
                        "target": obj.to_dict()["target"],
                        **m.to_dict(),
                        "verdict": v,
                        "printed_rules": base.to_dict(),
                        "comparison": None
                        if comparison is None
                        else {
                            "difference": round(comparison.difference, 6),
                            "lo": round(comparison.lo, 6),
                            "hi": round(comparison.hi, 6),
                            "p": comparison.p,
                            "test": comparison.test,
                        },
                        "text": _describe(obj, words, m, base, comparison, v, table),
                    }
                )
        cand_cells = cells[k * tables : (k + 1) * tables]
        checks = guards_mod.check(spec.guards, cand_cells, printed_cells)
        verdict = obj_mod.worst([e["verdict"] for e in entries])
        if guards_mod.broken(checks) and verdict == "confirmed":
            verdict = "miss"  # on target, but by breaking a guard: not an answer
        if printed_ok:
            verdict = "no_change_needed"
        out.append(
            {
                "config": config,
                "verdict": verdict,
                "games": spec.confirm,
                "seeds": [sweep.seed, sweep.seed + spec.confirm - 1],
                "objectives": entries,
                "printed_rules": {
                    "verdict": obj_mod.worst(printed_verdicts),
                    "guards": printed_guards,
                    "meets_every_target": printed_ok,
                },
                "guards": checks,
                "side_effects": adjust(effects),
            }
        )
    return out, sweep.total_games
