"""Coupled deals and the nightly's power: does a one-card change show, and what does it cost?

Four figures (docs/fairness.md "Coupled deals", docs/sweeps.md "Power"):

- **Discordance** (`coupled`): Trash Cult base against `donuts=9`, heuristic bots, the same
  seeds, dealt by Fisher-Yates and by the keyed (coupled) shuffle. On the games where the
  Rat cult sat, the games whose "Rat won" differs between the two, as a share of what two
  independent samples with those rates would give, with its 95 % bootstrap interval over
  the paired games. Target: keyed <= 0.5 (Fisher-Yates about 1.0). 20,000 keyed games per
  cell, so that the interval (about +-0.02) can tell the share from the target. From the
  measured rates and discordance, the power of the paired test of the Rat cult's change at
  several sizes (normal approximation of McNemar), at the 5 % level and at the nightly's BH
  level (q / the night's metrics).
- **Speed** (`speed`): random decisions/s of each game dealt keyed against Fisher-Yates,
  measured interleaved in the same run, as a ratio. Target: within 5 %.
- **Sources** (`coupling_sources`, bench/coupling_sources.py): the same pairs with the
  game's generator or the bots' tie-break streams re-coupled in several ways, to tell which
  randomness keeps the paired games apart (docs/fairness.md says what it found).
- **Nightly, A/A** (`nightly_aa`): pairs of real nights of a game (the nightly's cells, at
  the nightly's games per cell) on master seeds s and s + 1, compared as the nightly
  compares (`compare_nights`): the share of pairs with any drift. Target: at most 5 %.
- **Nightly, planted** (`nightly_planted`): a one-card change of each game against an A/A
  clean night on the same seed (paired, keyed deals), at the nightly's games per cell:
  whether the night flags it, per seed, with the wall time of one night of that game.

`BENCH_POWER_PARTS=coupled,speed,sources,aa,planted` (default all) runs some parts, and
`BENCH_POWER_PLANTED_GAMES` / `BENCH_POWER_AA_GAME_LIST` some games; what a run does not
measure keeps its last figures, each with the time and load it was measured at
(`parts_measured`). The shared 2-core machines cannot afford every part at full size in one
run (a Crazy Cultists night at its 400 games per cell is the slow part); the docs say which
size each figure was measured at.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import NormalDist
from typing import Any

from bench.coupling_sources import sources
from bench.load import load_average
from services.balance.sweeps import night, nightly
from services.balance.sweeps.drift import compare_nights
from services.balance.sweeps.local import run_local
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.power import bh_level
from services.balance.sweeps.simulate import simulate_chunk
from services.balance.sweeps.spec import parse_spec
from services.engines.core.play import play_game
from services.engines.registry import available_games, load_game

# Per cell, for the discordance: at 20,000 the Rat cult sits in about 10,000 pairs, so the
# keyed share's 95 % interval is about +-0.02 (at 1,000 it was +-0.08, too wide to tell 0.51
# from the 0.5 target). Fisher-Yates, only the reference (about 1.0), plays fewer.
GAMES = int(os.environ.get("BENCH_POWER_GAMES", 20000))
FY_GAMES = int(os.environ.get("BENCH_POWER_FY_GAMES", 4000))
SOURCES_GAMES = int(os.environ.get("BENCH_POWER_SOURCES_GAMES", 8000))  # per cell and mode
COUPLED_PROCESSES = int(os.environ.get("BENCH_POWER_PROCESSES", 2))
BOOTSTRAP = 1000  # resamples of the pairs for the share's interval
SPEED_SECONDS = float(os.environ.get("BENCH_POWER_SPEED_SECONDS", 6.0))  # per game and shuffle
AA_PAIRS = int(os.environ.get("BENCH_POWER_AA_PAIRS", 20))
# Games per cell of the planted and the A/A nights: by default each game's nightly size
# (`nightly.default_games`), so the figures are the nightly's own; a number sets all.
NIGHT_GAMES = (
    int(os.environ["BENCH_POWER_NIGHT_GAMES"]) if os.environ.get("BENCH_POWER_NIGHT_GAMES") else None
)
AA_GAMES = int(os.environ["BENCH_POWER_AA_GAMES"]) if os.environ.get("BENCH_POWER_AA_GAMES") else None
PLANTED_SEEDS = int(os.environ.get("BENCH_POWER_PLANTED_SEEDS", 3))
# The games whose planted change is measured, and whose A/A pairs (default: all three).
PLANTED_GAMES = [g for g in os.environ.get("BENCH_POWER_PLANTED_GAMES", "").split(",") if g]
AA_GAME_LIST = [g for g in os.environ.get("BENCH_POWER_AA_GAME_LIST", "").split(",") if g]
# The parts to run (default all): coupled, speed, sources, aa, planted; a part not run keeps the
# figures of the last run that measured it (bench/results.json), marked with its date.
PARTS = [p for p in os.environ.get("BENCH_POWER_PARTS", "").split(",") if p]
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


def _rat_of_chunk(spec: Any, chunk: Any) -> tuple[int, int, list[tuple[bool, bool]]]:
    """(cell, first game, `_rat` of its games) of one chunk, played in a worker process."""
    r = simulate_chunk(spec, chunk)
    if r is None:
        raise RuntimeError(f"chunk {chunk} was not played")
    return r["cell"], r["start"], _rat(r)


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


def discordance_interval(pairs: list[tuple[bool, bool]], seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the discordant share of the independent
    expectation, resampling the paired games (the share is a ratio of two estimates)."""
    n = len(pairs)
    # The four kinds of pair and their counts: a resample draws counts, not games.
    kinds = [(a, b) for a in (False, True) for b in (False, True)]
    counts = [sum(p == k for p in pairs) for k in kinds]
    draw = random.Random(seed)
    shares = []
    for _ in range(BOOTSTRAP):
        got = dict.fromkeys(kinds, 0)
        for k in draw.choices(kinds, weights=counts, k=n):
            got[k] += 1
        p_a = (got[(True, False)] + got[(True, True)]) / n
        p_b = (got[(False, True)] + got[(True, True)]) / n
        expected = p_a * (1 - p_b) + p_b * (1 - p_a)
        if expected > 0:
            shares.append((got[(True, False)] + got[(False, True)]) / n / expected)
    shares.sort()
    return shares[int(0.025 * len(shares))], shares[int(0.975 * len(shares)) - 1]


def coupled(games: int, fy_games: int, players: int = 2) -> dict[str, Any]:
    out: dict[str, Any] = {
        "games": games,
        "fisher_yates_games": fy_games,
        "players": players,
        "variant": "donuts=9",
    }
    measured: dict[str, tuple[float, float, float, float]] = {}
    for shuffle, size in (("fisher-yates", fy_games), ("keyed", games)):
        spec = parse_spec(
            {"game": "trash_cult", "seed": 20240101, "games": size, "players": players, "chunk": min(size, 1000),
             "grid": [{}, {"donuts": 9}], "lineups": ["heuristic"], "shuffle": shuffle}
        )  # fmt: skip
        started = time.perf_counter()
        rat: dict[int, list[tuple[bool, bool]]] = {0: [], 1: []}
        # Chunk by chunk, in COUPLED_PROCESSES processes: each hands back only its games'
        # (Rat sat, Rat won), so the facts of 20,000 games are never held at once.
        with ProcessPoolExecutor(COUPLED_PROCESSES, mp_context=multiprocessing.get_context("spawn")) as pool:
            done = sorted(pool.map(_rat_of_chunk, [spec] * len(plan := chunks(spec)), plan))
        for cell, _start, got in done:
            rat[cell] += got
        pairs = [(a[1], b[1]) for a, b in zip(rat[0], rat[1], strict=True) if a[0] and b[0]]
        n = len(pairs)
        p_a, p_b = sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n
        only_a = sum(a and not b for a, b in pairs) / n
        only_b = sum(b and not a for a, b in pairs) / n
        expected = p_a * (1 - p_b) + p_b * (1 - p_a)
        measured[shuffle] = (n / size, only_a + only_b, p_a, p_b)
        low, high = discordance_interval(pairs)
        out[shuffle] = {
            "games": size,
            "games_rat_sat": n,
            "rat_base": round(p_a, 4),
            "rat_variant": round(p_b, 4),
            "discordant": round((only_a + only_b) * n),
            "independent_expectation": round(expected * n, 1),
            "discordant_share_of_independent": round((only_a + only_b) / expected, 3),
            "share_interval_95": [round(low, 3), round(high, 3)],
            "seconds": round(time.perf_counter() - started, 1),
        }
    # The change is the rules', the same whichever shuffle dealt it: its size is taken from
    # both samples (weighted by their pairs), and each shuffle's power differs by its
    # discordance alone.
    weights = {s: out[s]["games_rat_sat"] for s in measured}
    total = sum(weights.values())
    delta = sum(weights[s] * (p_b - p_a) for s, (_r, _d, p_a, p_b) in measured.items()) / total
    base = sum(weights[s] * p_a for s, (_r, _d, p_a, _p_b) in measured.items()) / total
    share_of_sat = sum(weights[s] * r for s, (r, _d, _a, _b) in measured.items()) / total
    night_level = bh_level(0.05, NIGHT_METRICS)
    out["change"] = {
        "rat_base": round(base, 4),
        "difference": round(delta, 4),
        "rat_sat_share": round(share_of_sat, 3),
    }
    for shuffle, (_r, discordant, _a, _b) in measured.items():
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


def _night_games(game: str, given: int | None) -> int:
    """Games per cell: the bench's setting, or the nightly's own size for the game."""
    return given or nightly.default_games(game)


def nightly_aa(pairs: int, games: int | None, only: list[str]) -> dict[str, Any]:
    """A/A: each game's nights on master seeds s and s + 1 (independent), `pairs` of them,
    at the nightly's size: the share of pairs in which the comparison flags any drift."""
    out: dict[str, Any] = {}
    for game in available_games():
        if only and game not in only:
            continue
        size = _night_games(game, games)
        alarms, metrics, walls = 0, 0, []
        previous, wall = _night(game, size, 1)
        walls.append(wall)
        for s in range(2, pairs + 2):
            tonight, wall = _night(game, size, s)
            walls.append(wall)
            part = compare_nights(previous, tonight)["games"][game]
            alarms += bool(part["drifted"])
            metrics += part["compared"]
            previous = tonight
        out[game] = {
            "games_per_cell": size,
            "pairs": pairs,
            "pairs_with_a_drift": alarms,
            "false_alarm_rate": round(alarms / pairs, 3),
            "metrics_compared": metrics,
            "night_wall_seconds": round(sum(walls) / len(walls), 1),
        }
    return out


def nightly_planted(seeds: int, games: int | None, only: list[str]) -> dict[str, Any]:
    """Each game's one-card change against its A/A-clean night on the same seed, at the
    nightly's size: how many nights flag it, and one night's wall time."""
    out: dict[str, Any] = {}
    for game, change in PLANTED.items():
        if game not in available_games() or (only and game not in only):
            continue
        size = _night_games(game, games)
        try:
            flagged, walls = 0, []
            examples: list[Any] = []
            for s in range(seeds):
                # The two nights of a seed side by side, one process each: a Crazy Cultists
                # night at its 400 games per cell takes half an hour on a loaded machine.
                with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
                    base_job = pool.submit(_night, game, size, 100 + s)
                    planted_job = pool.submit(_night, game, size, 100 + s, change)
                    (base, wall), (planted, planted_wall) = base_job.result(), planted_job.result()
                walls += [wall, planted_wall]
                report = compare_nights(base, planted)["games"][game]
                flagged += bool(report["drifted"])
                if not examples:
                    examples = [(d["cell"], d["metric"], d["difference"]) for d in report["drifted"][:5]]
            out[game] = {
                "change": change,
                "games_per_cell": size,
                "nights": seeds,
                "nights_flagged": flagged,
                "power": round(flagged / seeds, 3),
                "night_wall_seconds": round(sum(walls) / len(walls), 1),
                "drifted_example": examples,
            }
        except Exception as exc:  # a planted field the game refuses: say so, measure the rest
            out[game] = {"change": change, "error": str(exc)}
    return out


def _previous() -> dict[str, Any]:
    """The power section of bench/results.json as last written (parts this run skips)."""
    path = Path(__file__).with_name("results.json")
    return (json.loads(path.read_text()) if path.exists() else {}).get("power", {})


# A part's figures per game: a run that measures some games keeps the others' last figures.
_PER_GAME = ("nightly_aa", "nightly_planted")


def run() -> dict[str, Any]:
    parts = PARTS or ["coupled", "speed", "sources", "aa", "planted"]
    out: dict[str, Any] = {"targets": {}, "load_average": load_average()}
    measured: dict[str, Any] = {}
    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    for part, key in (
        ("coupled", "coupled"),
        ("speed", "speed"),
        ("sources", "coupling_sources"),
        ("aa", "nightly_aa"),
        ("planted", "nightly_planted"),
    ):
        if part not in parts:
            continue
        started_load = load_average()
        if part == "coupled":
            out[key] = coupled(GAMES, FY_GAMES)
        elif part == "speed":
            out[key] = speed(SPEED_SECONDS)
        elif part == "sources":
            out[key] = sources(SOURCES_GAMES, COUPLED_PROCESSES)
        elif part == "aa":
            out[key] = nightly_aa(AA_PAIRS, AA_GAMES, AA_GAME_LIST)
        else:
            out[key] = nightly_planted(PLANTED_SEEDS, NIGHT_GAMES, PLANTED_GAMES)
        when = {
            "at": now,
            "load_average_at_start": started_load,
            "load_average_at_end": load_average(),
        }
        if key in _PER_GAME:
            measured.update({f"{key}.{game}": when for game in out[key]})
        else:
            measured[key] = when
    _keep_previous(out, measured, _previous())
    _check_targets(out)
    return out


def _keep_previous(out: dict[str, Any], measured: dict[str, Any], previous: dict[str, Any]) -> None:
    """Fill in what this run did not measure from bench/results.json as it is now (read at
    the end, so a run of other parts that finished meanwhile is kept), with when it was."""
    before = previous.get("parts_measured", {})
    fallback = {"at": previous.get("measured_at"), "load_average_at_end": previous.get("load_average_at_end")}
    aa = previous.get("nightly_aa")
    if aa and "game" in aa:  # the one-game layout of older runs
        previous["nightly_aa"] = {aa["game"]: {k: v for k, v in aa.items() if k != "game"}}
    for key in ("coupled", "speed", "coupling_sources", *_PER_GAME):
        if key in _PER_GAME:
            for game, row in previous.get(key, {}).items():
                if game not in out.setdefault(key, {}):
                    out[key][game] = row
                    measured[f"{key}.{game}"] = before.get(f"{key}.{game}", before.get(key, fallback))
        elif key not in out and key in previous:
            out[key] = previous[key]
            measured[key] = before.get(key, fallback)
    out["parts_measured"] = dict(sorted(measured.items()))


def _check_targets(out: dict[str, Any]) -> None:
    if "coupled" in out:
        keyed = out["coupled"]["keyed"]
        out["targets"]["keyed discordance under donuts=9 <= 0.5 of independent"] = (
            keyed["discordant_share_of_independent"] <= 0.5
        )
    for game, row in out.get("speed", {}).items():
        out["targets"][f"{game} keyed random decisions/s within 5% of Fisher-Yates"] = (
            row["keyed_over_fisher_yates"] >= 0.95
        )
    for game, row in out.get("nightly_aa", {}).items():
        out["targets"][f"{game} A/A night pairs with a drift <= 5%"] = row["false_alarm_rate"] <= 0.05
