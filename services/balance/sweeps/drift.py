"""Did a balance metric move since last night? A two-sample test per metric, one BH family a night.

A metric *drifted* when, together:

1. its two-sample test is rejected by Benjamini-Hochberg at q (default 0.05) in the family
   of every metric of every game compared tonight, and
2. the change is at least a practical effect size: 2 percentage points for rates and one
   turn for the mean game length by default (`DriftSettings`, env `NIGHTLY_MIN_RATE_CHANGE`,
   `NIGHTLY_MIN_TURNS_CHANGE`, `NIGHTLY_FDR_Q`). A real but tiny move (0.3 points at a
   million games) is not worth a designer's morning.

Which test (services.engines.core.stats):

- **Same seeds on both nights** (the nightly's fixed master seed; the cell's games in the
  same blocks of seeds): paired, game by game, for every metric whose per-game indicator
  is defined on the same games both nights. McNemar on the games whose outcome changed
  and the paired interval (`paired_rates`) for the win rate of a seat (of a team where
  seats are partners), the draw and turn-cap rates and the play rate of each card or
  agenda (played in the game or not: every game); for the win rate of a group label
  (cult) on the games where it sat, when the same seeds deal it to the same games both
  nights and never to two seats of one game. Mean length: paired t-test. Unchanged code
  replays the same games, so nothing differs and nothing can drift.
- **Different seeds** (`--seed`, a changed `NIGHTLY_SEED` or `NIGHTLY_GAMES`): two
  independent samples. Rates: score test and Newcombe's interval; mean length: Welch's
  t-test.
- **Pairing undefined, independent even on the same seeds**: win-when-played (its trials
  are the plays, and which games a card is played in changes with the rules, so the two
  nights' trials are different games), the win rate by bot (trials are seat appearances,
  several a game: not one pair a game), and a group label whose games differ between the
  nights (a rule or bot change altered the deal or the picks) or that some game gave to
  two seats. A night stored without per-game outcomes is compared from its counts.

Every compared row records the test that ran (`test`), and each game's part of the
report tallies them (`tests`), so "was this paired?" is read, not guessed.

The inputs are the nights' aggregates (counts) and, for the paired tests, each night's
per-game outcomes as bit masks, streamed block by block (`outcomes.OutcomeSource`): the
two nights are counted block of seeds against block of seeds (`pair_nights`, with
`paired.pair_block`, the counts a sweep's cells get against their base cell), so the
comparison holds one block of each night and a `PairCounts` a cell, whatever the games.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

from services.engines.core.game import GameSpec
from services.engines.core.stats import (
    Z95,
    Comparison,
    benjamini_hochberg,
    independent_means,
    independent_rates,
    paired_means_from_sums,
    paired_rates,
)
from services.engines.registry import load_game

from .outcomes import CAPPED, DRAWN, CellOutcomes, HeldOutcomes, OutcomeBlock, OutcomeSource
from .paired import PairCounts, pair_block
from .power import bh_level, rounded, z_total
from .units import tested_units

DIGITS = 6
# Group breakdowns that measure the bots rather than the game, or repeat the team units.
STRENGTH_GROUPS = frozenset({"partnership"})


@dataclass(frozen=True)
class DriftSettings:
    """The false-discovery rate and the smallest changes that count as drift."""

    q: float = 0.05
    min_rate_change: float = 0.02  # 2 percentage points
    min_turns_change: float = 1.0  # one turn of mean game length

    @classmethod
    def from_env(cls) -> DriftSettings:
        env = os.environ
        return cls(
            q=float(env.get("NIGHTLY_FDR_Q", cls.q)),
            min_rate_change=float(env.get("NIGHTLY_MIN_RATE_CHANGE", cls.min_rate_change)),
            min_turns_change=float(env.get("NIGHTLY_MIN_TURNS_CHANGE", cls.min_turns_change)),
        )

    def to_dict(self) -> dict[str, float]:
        return {
            "q": self.q,
            "min_rate_change": self.min_rate_change,
            "min_turns_change": self.min_turns_change,
        }


@dataclass
class NightGame:
    """One game's part of a night: its aggregates and its per-game outcomes (a stream; a
    plain dict of label -> `CellOutcomes` is held in memory as `HeldOutcomes`)."""

    game: str
    aggregates: dict[str, Any]
    outcomes: OutcomeSource | dict[str, CellOutcomes]

    def __post_init__(self) -> None:
        if not isinstance(self.outcomes, OutcomeSource):
            self.outcomes = HeldOutcomes(self.outcomes)


def _rate_from_counts(before: dict[str, Any], after: dict[str, Any]) -> Comparison | None:
    if not before.get("trials") or not after.get("trials"):
        return None
    return independent_rates(before["wins"], before["trials"], after["wins"], after["trials"])


def _length_sd(length: dict[str, Any], n: int) -> float:
    """The SD of game length; older summaries carry only the mean's interval, which gives it back."""
    if "sd" in length:
        return float(length["sd"])
    return (length["hi"] - length["lo"]) / (2 * Z95) * math.sqrt(n)


def pair_nights(
    gspec: GameSpec, players: Mapping[str, int], before: OutcomeSource, after: OutcomeSource
) -> dict[str, PairCounts]:
    """Tonight against last night game by game, for every cell (label -> players) both
    nights played on the same seeds in the same blocks; the other cells get no counts and
    are compared as independent samples. One pass over both streams, a block of each held
    at a time."""
    la, lb = before.layout(), after.layout()
    same = {
        label
        for label in la.keys() & lb.keys() & players.keys()
        if la[label] == lb[label] and sum(games for _start, games in la[label]) > 1
    }
    units = {label: tested_units(gspec, players[label]) for label in same}
    out = {label: PairCounts() for label in same}

    def shared(stream: Iterator[tuple[str, OutcomeBlock]]) -> Iterator[tuple[str, OutcomeBlock]]:
        return ((label, block) for label, block in stream if label in same)

    for (label, a), (label_b, b) in zip(shared(before.blocks()), shared(after.blocks()), strict=True):
        if label != label_b or a.start != b.start:
            raise ValueError(f"outcome streams out of order: {label} {a.start} against {label_b} {b.start}")
        out[label].merge(pair_block(a, b, units[label]))
    return out


def _paired_group(pc: PairCounts, name: str, label: str) -> Comparison | None:
    """A label's win rate on the games where it sat, paired when it sat in the same games
    both nights (no game only one night had it) and never twice in one game."""
    sat = pc.tables.get(("sat", name, label))
    twice = pc.tables.get(("twice", name, label))
    if sat is None or sat[0] or sat[1] or not sat[2] or (twice is not None and any(twice)):
        return None
    a_only, b_only, both = pc.tables.get(("group", name, label), [0, 0, 0])
    return paired_rates(a_only, b_only, both, sat[2] - a_only - b_only - both)


def cell_comparisons(
    gspec: GameSpec, before: dict[str, Any], after: dict[str, Any], pc: PairCounts | None
) -> list[tuple[str, str, Comparison]]:
    """(metric, kind: "rate" or "turns", comparison) for every metric both nights have;
    `pc` is the cell's paired counts (`pair_nights`), None where the seeds differ."""
    out: list[tuple[str, str, Comparison]] = []
    players = after["players"]
    # Groups and plays pair only where both nights recorded the per-game facts.
    with_facts = pc if pc is not None and pc.facts else None
    if pc is not None:
        for name, _seats in tested_units(gspec, players):
            out.append((f"{name} win rate", "rate", pc.rates(("unit", name))))
        out.append(("draw rate", "rate", pc.rates(DRAWN)))
        out.append(("turn-cap rate", "rate", pc.rates(CAPPED)))
        length = paired_means_from_sums(pc.games, pc.turns_base, pc.turns_cell, pc.turns_sq_diff)
        out.append(("mean turns", "turns", length))
    else:
        units_before = {f"seat {s['seat']}": s for s in before["seats"]}
        units_before.update({f"team {t['team']}": t for t in before.get("teams", [])})
        units_after = {f"seat {s['seat']}": s for s in after["seats"]}
        units_after.update({f"team {t['team']}": t for t in after.get("teams", [])})
        for name, _seats in tested_units(gspec, players):
            if name in units_before and name in units_after:
                comp = _rate_from_counts(units_before[name], units_after[name])
                if comp:
                    out.append((f"{name} win rate", "rate", comp))
        for metric, key in (("draw rate", "draws"), ("turn-cap rate", "capped")):
            comp = _rate_from_counts(before[key], after[key])
            if comp:
                out.append((metric, "rate", comp))
        n_a, n_b = before["games"], after["games"]
        if n_a > 1 and n_b > 1:
            la, lb = before["length"], after["length"]
            out.append(
                (
                    "mean turns",
                    "turns",
                    independent_means(
                        n_a, la["mean"], _length_sd(la, n_a), n_b, lb["mean"], _length_sd(lb, n_b)
                    ),
                )
            )
    # Rates over seat appearances: independent samples from the counts.
    bots_before = {b["bot"]: b for b in before.get("bots", [])}
    if len(bots_before) > 1:
        for b in after.get("bots", []):
            if b["bot"] in bots_before and (comp := _rate_from_counts(bots_before[b["bot"]], b)):
                out.append((f"bot {b['bot']} win rate", "rate", comp))
    partners = gspec.has_partners(players)
    for name, rows in after.get("groups", {}).items():
        if name in STRENGTH_GROUPS or (partners and name == "team"):
            continue
        old = {g["label"]: g for g in before.get("groups", {}).get(name, [])}
        for g in rows:
            if g["label"] not in old:
                continue
            comp = (
                _paired_group(with_facts, name, g["label"]) if with_facts is not None else None
            ) or _rate_from_counts(old[g["label"]], g)
            if comp:
                out.append((f"{name} {g['label']} win rate", "rate", comp))
    # A card played on one night only (a rule made it vanish, or appear) is compared too:
    # the other night played it in 0 of its games.
    old_played = {p["label"]: p for p in before.get("played", [])}
    new_played = {p["label"]: p for p in after.get("played", [])}
    for label in sorted(old_played.keys() | new_played.keys()):
        o, p = old_played.get(label), new_played.get(label)
        if with_facts is not None:
            comp = with_facts.rates(("played", label))
        else:
            comp = _rate_from_counts(
                o["play_rate"] if o else {"wins": 0, "trials": before["games"]},
                p["play_rate"] if p else {"wins": 0, "trials": after["games"]},
            )
        if comp:
            out.append((f"{label} play rate", "rate", comp))
        # Win-when-played: over the plays, which are not the same games both nights.
        if o and p and (comp := _rate_from_counts(o["win_when_played"], p["win_when_played"])):
            out.append((f"{label} win-when-played", "rate", comp))
    return out


def compare_nights(
    previous: dict[str, NightGame],
    tonight: dict[str, NightGame],
    settings: DriftSettings | None = None,
    game_spec: Callable[[str], GameSpec] = load_game,
) -> dict[str, Any]:
    """Every game of tonight against the same game of `previous`, one BH family for the night.

    Returns {"games": {game: {"compared", "tests", "drifted", "metrics", "power",
    "new_cells", "gone_cells"}}, "family_size", "level", "settings"}; a game absent last
    night has nothing compared. `metrics` is every compared row, drifted or not, with its
    raw `p`, its `p_adjusted` and its `mde` (the smallest change it finds with 80 % power
    after BH and past the practical minimum, power.py); `power` sums them up per metric.
    """
    settings = settings or DriftSettings()
    family: list[dict[str, Any]] = []
    games: dict[str, dict[str, Any]] = {}
    for game, now in sorted(tonight.items()):
        entry: dict[str, Any] = {
            "compared": 0,
            "tests": {},
            "drifted": [],
            "metrics": [],
            "power": [],
            "new_cells": [],
            "gone_cells": [],
        }
        games[game] = entry
        before = previous.get(game)
        if before is None:
            entry["new_cells"] = [c["label"] for c in now.aggregates["cells"]]
            continue
        gspec = game_spec(game)
        players = {c["label"]: c["players"] for c in now.aggregates["cells"]}
        # Both are OutcomeSource: NightGame.__post_init__ holds a plain dict as HeldOutcomes.
        pairs = pair_nights(
            gspec, players, cast(OutcomeSource, before.outcomes), cast(OutcomeSource, now.outcomes)
        )
        old_cells = {c["label"]: c for c in before.aggregates["cells"]}
        new_labels = {c["label"] for c in now.aggregates["cells"]}
        entry["new_cells"] = sorted(new_labels - set(old_cells))
        entry["gone_cells"] = sorted(set(old_cells) - new_labels)
        rows = []
        for cell in now.aggregates["cells"]:
            old = old_cells.get(cell["label"])
            if old is None or not old["games"] or not cell["games"]:
                continue
            for metric, kind, comp in cell_comparisons(gspec, old, cell, pairs.get(cell["label"])):
                rows.append(
                    {
                        "game": game,
                        "cell": cell["label"],
                        "metric": metric,
                        "kind": kind,
                        "before": round(comp.before, DIGITS),
                        "after": round(comp.after, DIGITS),
                        "difference": round(comp.difference, DIGITS),
                        "interval": [round(comp.lo, DIGITS), round(comp.hi, DIGITS)],
                        "p": comp.p,
                        "test": comp.test,
                        "games": comp.n,
                    }
                )
        entry["compared"] = len(rows)
        entry["tests"] = dict(sorted(Counter(r["test"] for r in rows).items()))
        family += rows
    rejected, adjusted = benjamini_hochberg([r["p"] for r in family], settings.q)
    level = bh_level(settings.q, len(family))
    for row, rej, adj in zip(family, rejected, adjusted, strict=True):
        row["p"] = round(row["p"], DIGITS)
        row["p_adjusted"] = round(adj, DIGITS)
        minimum = settings.min_turns_change if row["kind"] == "turns" else settings.min_rate_change
        row["large_enough"] = abs(row["difference"]) >= minimum
        row["mde"] = _mde(row, level, minimum)
        row["drifted"] = bool(rej and row["large_enough"])
        game = row.pop("game")
        games[game]["metrics"].append(row)
        if row["drifted"]:
            games[game]["drifted"].append(row)
    for entry in games.values():
        entry["power"] = _power(entry["metrics"])
    return {"games": games, "family_size": len(family), "level": level, "settings": settings.to_dict()}


def _mde(row: dict[str, Any], level: float, minimum: float) -> float | None:
    """The smallest change this row's test finds with 80 % power at the night's BH level,
    and at least the practical minimum: the test's standard error read from its own 95 %
    interval, times z_{1-level/2} + z_{0.8}. A paired rate whose games did not differ at
    all has no spread to read: a change of d creates at least d n discordant games, so it
    needs d >= z^2 / n (power.py)."""
    lo, hi = row["interval"]
    se = (hi - lo) / (2 * Z95)
    z = z_total(level)
    found = z * se
    if row["kind"] != "turns" and row.get("games"):
        found = max(found, z * z / row["games"])
    return rounded(max(found, minimum))


def _power(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per metric (the cell left out), the median MDE over its cells, and its range."""
    by_metric: dict[str, list[float]] = {}
    for row in rows:
        if row.get("mde") is not None:
            by_metric.setdefault(row["metric"], []).append(row["mde"])
    out = []
    for metric, values in sorted(by_metric.items()):
        values.sort()
        out.append({"metric": metric, "cells": len(values), "mde": values[len(values) // 2],
                    "smallest": values[0], "largest": values[-1]})  # fmt: skip
    return out
