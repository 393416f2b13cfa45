"""Coupled deals and the nightly's power: does a one-card change show, and what does it cost?

Four figures (docs/fairness.md "Coupled deals", docs/sweeps.md "Power"):

- **Discordance** (`coupled`): Trash Cult base against `donuts=9`, heuristic bots, the same
  seeds, dealt by Fisher-Yates and by the keyed (coupled) shuffle. On the games where the
  Rat cult sat, the games whose "Rat won" differs between the two, as a share of what two
  independent samples with those rates would give. Target: keyed <= 0.5 (Fisher-Yates
  about 0.94). From the measured rates and discordance, the power of the paired test of
  the Rat cult's change at several sizes (normal approximation of McNemar), at the 5 %
  level and at the nightly's BH level (q / the night's metrics).
- **Speed** (`speed`): random decisions/s of each game dealt keyed against Fisher-Yates,
  measured interleaved in the same run, as a ratio. Target: within 5 %.
- **Nightly, A/A** (`nightly_aa`): pairs of real Trash Cult nights (the nightly's cells) on
  different master seeds, compared as the nightly compares (`compare_nights`): the share of
  pairs with any drift. Target: 0 drifts in the A/A pairs, at most 5 % of pairs.
- **Nightly, planted** (`nightly_planted`): a one-card change of each game against an A/A
  clean night on the same seed (paired, keyed deals): whether the night flags it, per seed,
  with the wall time of one night of that game at that size.

Sizes are small on the project's shared 2-core machines (BENCH_POWER_* below); the docs
say which size each figure was measured at.
"""

from __future__ import annotations

import math
import os
import time
from statistics import NormalDist
from typing import Any

from services.balance.sweeps import night
from services.balance.sweeps.drift import compare_nights
from services.balance.sweeps.local import run_local
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.power import bh_level
from services.balance.sweeps.simulate import simulate_chunk
from services.balance.sweeps.spec import parse_spec
from services.engines.core.play import play_game
from services.engines.registry import available_games, load_game

GAMES = int(os.environ.get("BENCH_POWER_GAMES", 1000))  # per cell, for the discordance
SPEED_SECONDS = float(os.environ.get("BENCH_POWER_SPEED_SECONDS", 6.0))  # per game and shuffle
AA_PAIRS = int(os.environ.get("BENCH_POWER_AA_PAIRS", 20))
NIGHT_GAMES = int(os.environ.get("BENCH_POWER_NIGHT_GAMES", 2000))  # per cell: the planted nights
AA_GAMES = int(os.environ.get("BENCH_POWER_AA_GAMES", 200))  # per cell: the A/A nights
PLANTED_SEEDS = int(os.environ.get("BENCH_POWER_PLANTED_SEEDS", 3))
# The games whose planted change is measured (default all; Crazy Cultists' 30 cells are the
# slow part of a night).
PLANTED_GAMES = [g for g in os.environ.get("BENCH_POWER_PLANTED_GAMES", "").split(",") if g]
SIZES = (200, 400, 800, 1600, 3200)
# One card fewer of a kind each game deals: Trash Cult's tenth Donut, Crazy Cultists'
# fourth Counter-Spell; Tricky Cultists' cards are each unique, so its smallest deck change
# is a rank more (a card of each suit: one fewer leaves too few cards for 4 hands and Codexes).
PLANTED = {
    "trash_cult": {"donuts": 9},
    "crazy_cultists": {"counter_spell": 3},
    "tricky_cultists": {"ranks": 14},
}
NIGHT_METRICS = 1300  # about the metrics of a full night (issue 30: 1,307): its BH level
_NORMAL = NormalDist()


def _rat(result: dict[str, Any]) -> list[tuple[bool, bool]]:
    """Per game: (the Rat cult sat, the Rat cult won)."""
    out = []
    for k in range(result["games"]):
        cults = result["facts"][k]["groups"]["cult"]
        out.append(("Rat" in cults, any(cults[s] == "Rat" for s in result["winners"][k])))
    return out


def mcnemar_power(n: int, discordant: float, delta: float, alpha: float) -> float:
    """Power of the paired test at `n` games with this discordant share and true change."""
    d = max(discordant, abs(delta))
    if d <= 0 or n <= 0:
        return 0.0
    z = _NORMAL.inv_cdf(1 - alpha / 2)
    spread = math.sqrt(max(d - delta * delta, 1e-12))
    return _NORMAL.cdf((abs(delta) * math.sqrt(n) - z * math.sqrt(d)) / spread)


def independent_power(n: int, p_a: float, p_b: float, alpha: float) -> float:
    """Power of the two-sample test of two shares at `n` games each (no pairing)."""
    z = _NORMAL.inv_cdf(1 - alpha / 2)
    se = math.sqrt((p_a * (1 - p_a) + p_b * (1 - p_b)) / n)
    return _NORMAL.cdf(abs(p_a - p_b) / se - z) if se > 0 else 0.0


def coupled(games: int, players: int = 2) -> dict[str, Any]:
    out: dict[str, Any] = {"games": games, "players": players, "variant": "donuts=9"}
    measured: dict[str, tuple[int, float, float, float]] = {}
    for shuffle in ("fisher-yates", "keyed"):
        spec = parse_spec(
            {"game": "trash_cult", "seed": 20240101, "games": games, "players": players, "chunk": games,
             "grid": [{}, {"donuts": 9}], "lineups": ["heuristic"], "shuffle": shuffle}
        )  # fmt: skip
        started = time.perf_counter()
        res = {r["cell"]: r for r in (simulate_chunk(spec, c) for c in chunks(spec))}
        pairs = [(a[1], b[1]) for a, b in zip(_rat(res[0]), _rat(res[1]), strict=True) if a[0] and b[0]]
        n = len(pairs)
        p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
        only_a = sum(a and not b for a, b in pairs) / n
        only_b = sum(b and not a for a, b in pairs) / n
        expected = p_a * (1 - p_b) + p_b * (1 - p_a)
        measured[shuffle] = (n, only_a + only_b, p_a, p_b)
        out[shuffle] = {
            "games_rat_sat": n,
            "rat_base": round(p_a, 4),
            "rat_variant": round(p_b, 4),
            "discordant": round((only_a + only_b) * n),
            "independent_expectation": round(expected * n, 1),
            "discordant_share_of_independent": round((only_a + only_b) / expected, 3),
            "seconds": round(time.perf_counter() - started, 1),
        }
    # The change is the rules', the same whichever shuffle dealt it: its size is taken from
    # both samples together, and each shuffle's power differs by its discordance alone.
    delta = sum(p_b - p_a for _n, _d, p_a, p_b in measured.values()) / len(measured)
    base = sum(p_a for _n, _d, p_a, _p_b in measured.values()) / len(measured)
    share_of_sat = sum(n for n, _d, _a, _b in measured.values()) / len(measured) / games
    night_level = bh_level(0.05, NIGHT_METRICS)
    out["change"] = {
        "rat_base": round(base, 4),
        "difference": round(delta, 4),
        "rat_sat_share": round(share_of_sat, 3),
    }
    for shuffle, (_n, discordant, _a, _b) in measured.items():
        for key, level in (("power_at_5pct", 0.05), ("power_at_night_bh_level", night_level)):
            out[shuffle][key] = {
                str(size): round(mcnemar_power(round(size * share_of_sat), discordant, delta, level), 3)
                for size in SIZES
            }
    for key, level in (
        ("independent_power_at_5pct", 0.05),
        ("independent_power_at_night_bh_level", night_level),
    ):
        out[key] = {
            str(size): round(independent_power(round(size * share_of_sat), base, base + delta, level), 3)
            for size in SIZES
        }
    return out


def speed(seconds: float) -> dict[str, Any]:
    """Random decisions/s dealt keyed against Fisher-Yates, interleaved one game at a time."""
    out: dict[str, Any] = {}
    for game in available_games():
        spec = load_game(game)
        players = spec.default_players
        bots = ["random"] * players
        spent = {"fisher-yates": 0.0, "keyed": 0.0}
        decisions = {"fisher-yates": 0, "keyed": 0}
        seed = 0
        for shuffle in spent:  # warm up both paths
            play_game(spec, None, players, 0, bots, record_actions=False, shuffle=shuffle)
        while min(spent.values()) < seconds:
            seed += 1
            # Alternate which shuffle plays a seed first, so neither always runs on the
            # caches (and the neighbours' load) the other left behind.
            for shuffle in sorted(spent, reverse=seed % 2 == 1):
                started = time.perf_counter()
                rec = play_game(spec, None, players, seed, bots, record_actions=False, shuffle=shuffle)
                spent[shuffle] += time.perf_counter() - started
                decisions[shuffle] += rec.decisions
        rate = {s: decisions[s] / spent[s] for s in spent}
        out[game] = {
            "games_each": seed,
            "fisher_yates_decisions_per_second": round(rate["fisher-yates"]),
            "keyed_decisions_per_second": round(rate["keyed"]),
            "keyed_over_fisher_yates": round(rate["keyed"] / rate["fisher-yates"], 3),
        }
    return out


def _night(game: str, games: int, seed: int, overrides: dict[str, Any] | None = None) -> tuple[Any, float]:
    started = time.perf_counter()
    (spec,) = night.suite(games, seed, {game: overrides} if overrides else None, only=[game])
    summary, _replays, results = run_local(spec, processes=1)
    return {game: night.night_game(spec, summary, results)}, time.perf_counter() - started


def nightly_aa(pairs: int, games: int) -> dict[str, Any]:
    """A/A: Trash Cult nights on master seeds s and s + 1 (independent), `pairs` of them."""
    alarms, metrics, walls = 0, 0, []
    previous, wall = _night("trash_cult", games, 1)
    walls.append(wall)
    for s in range(2, pairs + 2):
        tonight, wall = _night("trash_cult", games, s)
        walls.append(wall)
        report = compare_nights(previous, tonight)
        part = report["games"]["trash_cult"]
        alarms += bool(part["drifted"])
        metrics += part["compared"]
        previous = tonight
    return {
        "game": "trash_cult",
        "games_per_cell": games,
        "pairs": pairs,
        "pairs_with_a_drift": alarms,
        "false_alarm_rate": round(alarms / pairs, 3),
        "metrics_compared": metrics,
        "night_wall_seconds": round(sum(walls) / len(walls), 1),
    }


def nightly_planted(seeds: int, games: int) -> dict[str, Any]:
    """Each game's one-card change against its A/A-clean night on the same seed."""
    out: dict[str, Any] = {}
    for game, change in PLANTED.items():
        if game not in available_games() or (PLANTED_GAMES and game not in PLANTED_GAMES):
            continue
        try:
            flagged, walls, typical = 0, [], []
            for s in range(seeds):
                base, wall = _night(game, games, 100 + s)
                planted, _wall = _night(game, games, 100 + s, change)
                walls.append(wall)
                report = compare_nights(base, planted)["games"][game]
                flagged += bool(report["drifted"])
                typical.append(report["power"])
            out[game] = {
                "change": change,
                "games_per_cell": games,
                "nights": seeds,
                "nights_flagged": flagged,
                "power": round(flagged / seeds, 3),
                "night_wall_seconds": round(sum(walls) / len(walls), 1),
                "drifted_example": [(d["cell"], d["metric"], d["difference"]) for d in report["drifted"][:5]],
            }
        except Exception as exc:  # a planted field the game refuses: say so, measure the rest
            out[game] = {"change": change, "error": str(exc)}
    return out


def run() -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}, "load_average": list(os.getloadavg())}
    out["coupled"] = coupled(GAMES)
    share = out["coupled"]["keyed"]["discordant_share_of_independent"]
    out["targets"]["keyed discordance under donuts=9 <= 0.5 of independent"] = share <= 0.5
    out["speed"] = speed(SPEED_SECONDS)
    for game, row in out["speed"].items():
        out["targets"][f"{game} keyed random decisions/s within 5% of Fisher-Yates"] = (
            row["keyed_over_fisher_yates"] >= 0.95
        )
    out["nightly_aa"] = nightly_aa(AA_PAIRS, AA_GAMES)
    out["targets"]["A/A night pairs with a drift <= 5%"] = out["nightly_aa"]["false_alarm_rate"] <= 0.05
    out["nightly_planted"] = nightly_planted(PLANTED_SEEDS, NIGHT_GAMES)
    return out
