"""Nightly drift: the false-alarm rate over many A/A night pairs and the power against planted changes.

`services/balance/sweeps/drift.py` calls a metric drifted when its two-sample test is rejected by
Benjamini-Hochberg (q = 0.05) over every metric of the night *and* it moved by at least the
practical effect size (2 points, 1 turn). Two figures say what that buys:

- **False-alarm rate**: the share of A/A night pairs (same rules, independent games: what
  another master seed or a bot refactor that draws random numbers differently gives) with
  at least one drift. Target: at most 5 %.
- **Power**: the share of nights in which a planted change of seat 0's win rate in one
  cell (4 players, other seats losing it evenly) is flagged, for several sizes, at the
  nightly's 400 games per cell and at 2,000.

The nights are synthetic but shaped like the real suite (Crazy Cultists 6 variants x 2-6
players, Trash Cult 2-4 players, Tricky Cultists one 2-team cell; a seat-0 edge, 1 % draws,
1 % turn-capped games, game length with its spread), drawn with numpy from their counts:
an A/A pair with another seed is compared as independent samples, which is exactly the
count-based path. A few real A/A pairs of small real nights (Trash Cult and Tricky
Cultists, three master seeds) back them up, and real Trash Cult nights on the nightly's
fixed seed show the paired path: the night replayed flags nothing, and a planted cult
rule and a planted card change are flagged, paired (McNemar), in every cell.
"""

from __future__ import annotations

import os
import time
from typing import Any, cast

import numpy as np

from bench.load import load_average
from services.balance.sweeps import night
from services.balance.sweeps.drift import DriftSettings, NightGame, compare_nights
from services.balance.sweeps.local import run_local
from services.balance.sweeps.outcomes import CellOutcomes

AA_PAIRS = int(os.environ.get("BENCH_DRIFT_AA_PAIRS", 200))
POWER_PAIRS = int(os.environ.get("BENCH_DRIFT_POWER_PAIRS", 50))
SHIFTS = (0.02, 0.03, 0.05, 0.08)
PLANTED_CELL = "base | 4p | heuristic x4"
REAL_GAMES = int(os.environ.get("BENCH_DRIFT_REAL_GAMES", 100))

# (game, variants, player counts, teams?) of the nightly suite.
LAYOUT = [
    (
        "crazy_cultists",
        [
            "base",
            "variant=devilish",
            "variant=fiendish",
            "variant=beast",
            "dark_powers=true",
            "optional_setup=true",
        ],
        range(2, 7),
        False,
    ),
    ("trash_cult", ["base"], range(2, 5), False),
    ("tricky_cultists", ["base"], [4], True),
]


def _rate(wins: int, trials: int) -> dict[str, int]:
    return {"wins": int(wins), "trials": int(trials)}


def _cell(rng: np.random.Generator, label: str, units: int, games: int, teams: bool, shift: float) -> dict:
    draw, cap = 0.01, 0.01
    edge = 0.03  # seat 0's edge over a fair share, as the real games show
    probs = np.full(units, (1 - draw - edge) / units)
    probs[0] += edge + shift
    probs[1:] -= shift / (units - 1)
    counts = rng.multinomial(games, [*probs, draw])
    mean_turns, sd_turns = 20.0 + 8 * units, 6.0 + units
    length_mean = mean_turns + rng.normal(0, sd_turns / np.sqrt(games))
    rows = [_rate(counts[u], games) | {("team" if teams else "seat"): u} for u in range(units)]
    return {
        "label": label,
        "games": games,
        "players": 4 if teams else units,
        "seats": [] if teams else rows,
        "teams": rows if teams else [],
        "draws": _rate(counts[-1], games),
        "capped": _rate(rng.binomial(games, cap), games),
        "length": {"mean": float(length_mean), "sd": sd_turns},
    }


def synthetic_night(rng: np.random.Generator, games: int, shift: float = 0.0) -> dict[str, NightGame]:
    out = {}
    for game, variants, players, teams in LAYOUT:
        cells = []
        for variant in variants:
            for n in players:
                label = f"{variant} | {n}p | heuristic x{n}"
                planted = shift if (game == "crazy_cultists" and label == PLANTED_CELL) else 0.0
                cells.append(_cell(rng, label, 2 if teams else n, games, teams, planted))
        out[game] = NightGame(game, {"cells": cells}, {})
    return out


def false_alarms(pairs: int, games: int, settings: DriftSettings) -> dict[str, Any]:
    rng = np.random.default_rng(20240101)
    nights_with_drift = drifts = compared = 0
    for _ in range(pairs):
        report = compare_nights(synthetic_night(rng, games), synthetic_night(rng, games), settings)
        n = sum(len(g["drifted"]) for g in report["games"].values())
        drifts += n
        nights_with_drift += n > 0
        compared = report["family_size"]
    return {
        "pairs": pairs,
        "games_per_cell": games,
        "metrics_per_night": compared,
        "nights_with_a_false_alarm": nights_with_drift,
        "false_alarm_rate": round(nights_with_drift / pairs, 4),
        "false_drifts_per_night": round(drifts / pairs, 4),
    }


def power(pairs: int, games: int, settings: DriftSettings) -> dict[str, float]:
    rng = np.random.default_rng(7)
    out = {}
    for shift in SHIFTS:
        hits = 0
        for _ in range(pairs):
            report = compare_nights(synthetic_night(rng, games), synthetic_night(rng, games, shift), settings)
            hits += any(
                d["cell"] == PLANTED_CELL and d["metric"] == "seat 0 win rate"
                for d in report["games"]["crazy_cultists"]["drifted"]
            )
        out[f"+{round(100 * shift)} points"] = round(hits / pairs, 3)
    return out


def _paired_planted(rng: np.random.Generator, games: int, shift: float) -> tuple[dict, dict, Any, Any]:
    """The planted 4-player cell on the same seeds both nights: tonight is last night's games
    with just enough games moved from another seat to seat 0 to add `shift` (the best case
    for pairing: the change touches no other game)."""
    from services.balance.sweeps.outcomes import transpose

    units, draw, edge = 4, 0.01, 0.03
    probs = np.full(units, (1 - draw - edge) / units)
    probs[0] += edge
    picks = rng.choice(units + 1, size=games, p=[*probs, draw])
    before = [[int(w)] if w < units else [] for w in picks]
    others = [i for i, w in enumerate(picks) if 0 < w < units]
    moved = set(rng.choice(others, size=min(len(others), round(shift * games)), replace=False).tolist())
    after = [[0] if i in moved else w for i, w in enumerate(before)]
    turns = [int(t) for t in rng.integers(40, 70, size=games)]

    def side(winners: list[list[int]]) -> tuple[dict, Any]:
        # The cell's games as one chunk result of seeds 0.., turned into its bit masks.
        chunk = {"start": 0, "games": games, "winners": winners, "turns": turns, "capped": [0] * games}
        out = CellOutcomes([transpose(chunk, 0)])
        wins = [sum(1 for w in winners if w == [u]) for u in range(units)]
        cell = _cell(rng, PLANTED_CELL, units, games, False, 0.0)
        cell["seats"] = [_rate(wins[u], games) | {"seat": u} for u in range(units)]
        cell["draws"] = _rate(sum(1 for w in winners if not w), games)
        cell["capped"] = _rate(0, games)
        return cell, out

    (cell_a, out_a), (cell_b, out_b) = side(before), side(after)
    return cell_a, cell_b, out_a, out_b


def paired_power(pairs: int, games: int, settings: DriftSettings) -> dict[str, float]:
    rng = np.random.default_rng(11)
    out = {}
    for shift in SHIFTS:
        hits = 0
        for _ in range(pairs):
            a, b = synthetic_night(rng, games), synthetic_night(rng, games)
            cell_a, cell_b, out_a, out_b = _paired_planted(rng, games, shift)
            for nightly, cell, outcomes in ((a, cell_a, out_a), (b, cell_b, out_b)):
                game = nightly["crazy_cultists"]
                game.aggregates["cells"] = [
                    c if c["label"] != PLANTED_CELL else cell for c in game.aggregates["cells"]
                ]
                cast("dict[str, CellOutcomes]", game.outcomes)[PLANTED_CELL] = outcomes
            report = compare_nights(a, b, settings)
            hits += any(
                d["cell"] == PLANTED_CELL and d["metric"] == "seat 0 win rate"
                for d in report["games"]["crazy_cultists"]["drifted"]
            )
        out[f"+{round(100 * shift)} points"] = round(hits / pairs, 3)
    return out


def real_aa(games: int) -> dict[str, Any]:
    """Three small real nights (Trash Cult, Tricky Cultists) with different master seeds."""
    nights = []
    for seed in (1, 2, 3):
        tonight = {}
        for spec in night.suite(games, seed, only=["trash_cult", "tricky_cultists"]):
            summary, _replays, results = run_local(spec, processes=1)
            tonight[spec.game] = night.night_game(spec, summary, results)
        nights.append(tonight)
    pairs = [(0, 1), (0, 2), (1, 2)]
    found = []
    for a, b in pairs:
        report = compare_nights(nights[a], nights[b])
        found.append(
            {
                "seeds": [a + 1, b + 1],
                "compared": report["family_size"],
                "drifted": sum(len(g["drifted"]) for g in report["games"].values()),
            }
        )
    return {"games_per_cell": games, "pairs": found}


# Rule changes planted in a real Trash Cult night on the same seeds, and the metric each
# must move: a cult's food made too scarce to win with (TC-2, TC-3), a card taken out (TC-1).
PLANTED_RULES = {
    "donuts=2": ({"donuts": 2}, "cult Rat win rate"),
    "pigeon_thieves=0": ({"pigeon_thieves": 0}, "Pigeon Thief play rate"),
}


def real_paired(games: int) -> dict[str, Any]:
    """Real Trash Cult nights on the nightly's fixed seed: the night replayed (A/A), and
    planted cult and card rule changes. Every metric on the same games both nights is
    paired (cult and card rates included); the tally of tests says which ran."""

    def play(overrides: dict[str, Any] | None = None) -> dict[str, NightGame]:
        (spec,) = night.suite(
            games, None, {"trash_cult": overrides} if overrides else None, only=["trash_cult"]
        )
        summary, _replays, results = run_local(spec, processes=1)
        return {"trash_cult": night.night_game(spec, summary, results)}

    base = play()
    again = compare_nights(base, play())["games"]["trash_cult"]
    out: dict[str, Any] = {
        "games_per_cell": games,
        "aa_same_seeds": {
            "compared": again["compared"],
            "drifted": len(again["drifted"]),
            "tests": again["tests"],
        },
    }
    for name, (overrides, metric) in PLANTED_RULES.items():
        part = compare_nights(base, play(overrides))["games"]["trash_cult"]
        hits = [d for d in part["drifted"] if d["metric"] == metric]
        out[name] = {
            "metric": metric,
            "cells_flagged": f"{len(hits)} of 3",
            "tests": sorted({d["test"] for d in hits}),
            "other_drifts": len(part["drifted"]) - len(hits),
        }
    return out


def run() -> dict[str, Any]:
    settings = DriftSettings()
    started = time.perf_counter()
    aa = false_alarms(AA_PAIRS, 400, settings)
    print(f"  A/A false-alarm rate {aa['false_alarm_rate']:.1%} over {AA_PAIRS} night pairs", flush=True)
    pw400 = power(POWER_PAIRS, 400, settings)
    print(f"  power at 400 games/cell: {pw400}", flush=True)
    pw2000 = power(POWER_PAIRS, 2000, settings)
    print(f"  power at 2,000 games/cell: {pw2000}", flush=True)
    paired400 = paired_power(POWER_PAIRS, 400, settings)
    print(f"  power at 400 games/cell, same seeds (paired): {paired400}", flush=True)
    synthetic_seconds = time.perf_counter() - started
    real = real_aa(REAL_GAMES)
    print(f"  real A/A pairs: {real['pairs']}", flush=True)
    paired_real = real_paired(REAL_GAMES)
    print(f"  real nights on the same seeds: {paired_real}", flush=True)
    return {
        "settings": settings.to_dict(),
        "aa": aa,
        "power_400_games_per_cell": pw400,
        "power_2000_games_per_cell": pw2000,
        "power_400_games_per_cell_paired": paired400,
        "power_pairs": POWER_PAIRS,
        "planted": f"seat 0 win rate in '{PLANTED_CELL}' (Crazy Cultists), other seats lose it evenly",
        "real_aa": real,
        "real_same_seeds": paired_real,
        "synthetic_seconds": round(synthetic_seconds, 1),
        "load_average": load_average(),
        "targets": {
            "aa_false_alarm_rate_at_most_5pct": aa["false_alarm_rate"] <= 0.05,
            "real_aa_pairs_flag_nothing": all(p["drifted"] == 0 for p in real["pairs"]),
            "real_same_seed_aa_flags_nothing": paired_real["aa_same_seeds"]["drifted"] == 0,
            "planted_cult_and_card_changes_flagged": all(
                paired_real[name]["cells_flagged"] == "3 of 3" for name in PLANTED_RULES
            ),
        },
    }
