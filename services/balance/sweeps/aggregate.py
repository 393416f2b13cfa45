"""From chunk results to the balance aggregates of a sweep: one pure function of the results.

Aggregation runs once all chunks are in, on whichever process finishes the sweep (a
Celery worker or the local CLI). It folds the chunk results, one at a time, into per-cell
partial aggregates (`partial.py`: whole-number counts and sums, merged associatively), so
its memory grows with cells, not games, and the same spec and seed give byte-identical
aggregates however the chunks were scheduled, retried, ordered or spread over processes —
that is what lets `--local` and Celery be compared with `==`.

Fair share: in a fair game every seat expects the same share of the winner slots, so the
fair win rate of a cell is (winner slots handed out) / (games x seats). With one winner a
game and no draws that is 1/n; Tricky Cultists' two partners per win make it 1/2; draws
lower it. Every rate is compared with the fair share of its own cell.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlencode

import orjson

from services.engines.core import stats

from .cards import record_columns as card_columns
from .homogeneity import homogeneity_test, stratum_key
from .partial import CellPartial, fold
from .plan import game_seed
from .significance import apply_family
from .spec import Cell, SweepSpec, lineup_label

DIGITS = 6
# Tests that measure the bots, not the game: a heuristic bot beating random ones (and the
# partnership it sits in) is expected. They are reported with their p-values but kept out
# of the Benjamini-Hochberg family, so they neither flag cells nor dilute the real tests.
STRENGTH_TESTS = frozenset({"bot", "group:partnership"})


def _r(x: float) -> float:
    return round(x, DIGITS)


def _rate(wins: int, trials: int, fair: float | None = None) -> dict[str, Any]:
    lo, hi = stats.wilson(wins, trials)
    out: dict[str, Any] = {"wins": wins, "trials": trials, "rate": _r(wins / trials if trials else 0.0)}
    out["lo"], out["hi"] = _r(lo), _r(hi)
    if fair is not None:
        out["delta"] = _r(out["rate"] - fair)
        out["outside"] = trials > 0 and not lo <= fair <= hi
    return out


def _test(observed: list[int], weights: list[int]) -> dict[str, Any]:
    """Chi-square of wins against each category's fair share of them, by `weights` (appearances)."""
    total_w = sum(weights)
    total_o = sum(observed)
    expected = [w * total_o / total_w if total_w else 0.0 for w in weights]
    chi2, df, p = stats.chi_square_gof(observed, expected)
    return {"chi2": _r(chi2), "df": df, "p": p}


def _homogeneity(strata: dict[str, int], wins: dict[str, int]) -> dict[str, Any]:
    test = homogeneity_test(strata, wins)
    return {"chi2": _r(float(test["chi2"])), "df": test["df"], "p": test["p"], "method": test["method"]}


def _team_test(part: CellPartial, teams: list[list[int]]) -> dict[str, Any]:
    """Teams as labels of one stratum shape: every team at every table, W teams winning."""
    strata: dict[str, int] = {}
    labels = [f"team {t}" for t in range(len(teams))]
    wins = dict.fromkeys(labels, 0)
    for key, count in part.winner_sets.items():
        won = {int(s) for s in key.split(",")} if key else set()
        winning = [t for t, seats in enumerate(teams) if not won.isdisjoint(seats)]
        stratum = stratum_key(labels, len(winning))
        strata[stratum] = strata.get(stratum, 0) + count
        for t in winning:
            wins[labels[t]] += count
    return _homogeneity(strata, wins)


def ordered(results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(results, key=lambda r: (r["cell"], r["start"]))


def replay_url(spec: SweepSpec, cell: Cell, game_index: int) -> str:
    """The gateway's replay page for one game (the page re-simulates it from these fields)."""
    query = {
        "game": spec.game,
        "seed": game_seed(spec, game_index),
        "players": cell.players,
        "config": orjson.dumps(cell.overrides, option=orjson.OPT_SORT_KEYS).decode(),
        "bots": ",".join(cell.seat_bots(game_index)),
    }
    if spec.shuffle != "fisher-yates":  # the replay page's default is the older sweeps' deal
        query["shuffle"] = spec.shuffle
    return "/replay?" + urlencode(query)


def aggregate(spec: SweepSpec, results: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Every table of the report as plain data (the JSON summary's `aggregates`).

    `results` may be a generator (chunks streamed from Redis): it is read once, one chunk
    at a time."""
    return aggregate_partials(spec, fold(spec, results))


def aggregate_partials(spec: SweepSpec, by_cell: dict[int, CellPartial]) -> dict[str, Any]:
    """The aggregates from every cell's merged partial (see `partial.py`)."""
    cells = spec.cells()
    cell_out = [_cell(spec, cell, by_cell[cell.index]) for cell in cells]

    for c in cell_out:
        skipped = cells[c["cell"]].skipped
        if skipped is not None:  # no games: nothing to test, and no p = 1 in the family
            c["skipped"], c["tests"] = skipped, {}
        for name, test in c["tests"].items():
            test["balance"] = name not in STRENGTH_TESTS
            test["p"] = _r(test["p"])
        c["representative"] = _representative(spec, cells[c["cell"]], c, by_cell[c["cell"]])
    out = {
        "game": spec.game,
        "games_requested": spec.total_games,
        "games_counted": sum(c["games"] for c in cell_out),
        "skipped_cells": [
            {"cell": c["cell"], "label": c["label"], "reason": c["skipped"]}
            for c in cell_out
            if "skipped" in c
        ],
        "cells": cell_out,
        "variants": _variants(spec, cells, by_cell),
        "paired": [],  # each cell against its base cell: filled by summary.add_paired
    }
    # One family of tests for the whole grid (Benjamini-Hochberg); build_summary runs it
    # again once the paired comparisons with the base cells have joined the family.
    apply_family(out)
    return out


def _cell(spec: SweepSpec, cell: Cell, part: CellPartial) -> dict[str, Any]:
    n_seats = cell.players
    teams = spec.game_spec.team_seats(n_seats)
    partners = any(len(t) > 1 for t in teams)
    team_wins = part.team_wins(teams)
    games, slots, draws, capped, decisions, wins = (
        part.games, part.slots, part.draws, part.capped, part.decisions, part.wins
    )  # fmt: skip
    bot_apps, bot_wins = part.bot_apps, part.bot_wins
    group_apps, group_wins = part.group_apps, part.group_wins
    played_games, played_seats, played_wins = part.played_games, part.played_seats, part.played_wins
    outcomes = {lab: (part.outcome_met[lab], n) for lab, n in part.outcome_tried.items()}

    fair = slots / (games * n_seats) if games else 0.0
    seats = [{"seat": s, **_rate(wins[s], games, fair)} for s in range(n_seats)]
    first = seats[0]
    # Partners win together: the team is the unit of the test (counting each partner as
    # its own trial would double the statistic), and the facts' "team" group is not tested
    # again. Free-for-all games test the seats.
    team_rows: list[dict[str, Any]] = []
    if partners:
        team_fair = sum(team_wins) / (games * len(teams)) if games else 0.0
        team_rows = [
            {"team": t, "seats": seats_of_team, **_rate(team_wins[t], games, team_fair)}
            for t, seats_of_team in enumerate(teams)
        ]
        tests: dict[str, dict[str, Any]] = {"team": _team_test(part, teams)}
    else:
        tests = {"seat": _test(wins, [games] * n_seats)}
    bots = []
    if cell.rotates:
        labels = sorted(bot_apps)
        bots = [
            {"bot": b, "appearances": bot_apps[b], **_rate(bot_wins[b], bot_apps[b], fair)} for b in labels
        ]
        tests["bot"] = _test([bot_wins[b] for b in labels], [bot_apps[b] for b in labels])
    groups: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(group_apps):
        labels = sorted(group_apps[name])
        groups[name] = [
            {
                "label": lab,
                "appearances": group_apps[name][lab],
                **_rate(group_wins[name][lab], group_apps[name][lab], fair),
            }
            for lab in labels
        ]
        if partners and name == "team":
            continue
        strata = part.group_strata.get(name)
        tests[f"group:{name}"] = (
            _homogeneity(strata, group_wins[name])
            if strata
            else _test(  # partials stored before the strata were counted
                [group_wins[name][lab] for lab in labels], [group_apps[name][lab] for lab in labels]
            )
        )
    played = [
        {
            "label": lab,
            "games": played_games[lab],
            "play_rate": _rate(played_games[lab], games),
            "plays": played_seats[lab],
            "win_when_played": _rate(played_wins[lab], played_seats[lab], fair),
        }
        for lab in sorted(played_games)
    ]
    mean, mlo, mhi = part.length_mean_interval()
    return {
        "cell": cell.index,
        "label": cell.label,
        "variant": cell.variant,
        "overrides": cell.overrides,
        "players": n_seats,
        "lineup": list(cell.lineup),
        "lineup_label": lineup_label(cell.lineup),
        "games": games,
        "fair_share": _r(fair),
        "seats": seats,
        "teams": team_rows,
        "first_seat_advantage": {
            "rate": first["rate"],
            "advantage": _r(first["rate"] - fair),
            "lo": _r(first["lo"] - fair),
            "hi": _r(first["hi"] - fair),
            "significant": first.get("outside", False),
        },
        "draws": _rate(draws, games),
        "capped": _rate(capped, games),
        "length": {
            "mean": _r(mean),
            "lo": _r(mlo),
            "hi": _r(mhi),
            "sd": _r(part.length_sd()),
            "median": _r(part.length_quantile(0.5)),
            "p10": _r(part.length_quantile(0.1)),
            "p90": _r(part.length_quantile(0.9)),
            "min": min(part.turns) if part.turns else 0,
            "max": max(part.turns) if part.turns else 0,
            "histogram": part.length_histogram(),
        },
        "decisions_mean": _r(decisions / games if games else 0.0),
        "bots": bots,
        "groups": groups,
        "played": played,
        "outcomes": [{"label": lab, **_rate(*outcomes[lab])} for lab in sorted(outcomes)],
        "tests": tests,
    }


def _representative(
    spec: SweepSpec, cell: Cell, summary: dict[str, Any], part: CellPartial
) -> dict[str, Any] | None:
    """A game that shows the cell's lean: the first one won by its most over-winning seat."""
    if not summary["games"]:
        return None
    top = max(summary["seats"], key=lambda s: (s["delta"], -s["seat"]))["seat"]
    # The top seat never won (all draws): any game shows the cell.
    chosen = part.first_win.get(top) or part.first_game
    assert chosen is not None
    index, won, turns = chosen
    return {
        "game_index": index,
        "seed": game_seed(spec, index),
        "players": cell.players,
        "bots": cell.seat_bots(index),
        "winners": won,
        "turns": turns,
        "seat": top,
        "replay_url": replay_url(spec, cell, index),
        "record": f"replays/cell-{cell.index}.json",
    }


def _variants(spec: SweepSpec, cells: list[Cell], by_cell: dict[int, CellPartial]) -> list[dict[str, Any]]:
    """Per (variant, player count), pooled over line-ups: the rows of the variant x seat heatmap."""
    pooled: dict[tuple[str, int], dict[str, Any]] = {}
    for cell in cells:
        key = (cell.variant, cell.players)
        teams = spec.game_spec.team_seats(cell.players)
        entry = pooled.setdefault(
            key,
            {
                "wins": [0] * cell.players,
                "games": 0,
                "slots": 0,
                "draws": 0,
                "capped": 0,
                "turns": 0,
                "teams": teams,
                "team_wins": [0] * len(teams),
            },
        )
        part = by_cell[cell.index]
        entry["team_wins"] = [a + b for a, b in zip(entry["team_wins"], part.team_wins(teams), strict=True)]
        entry["games"] += part.games
        entry["slots"] += part.slots
        entry["draws"] += part.draws
        entry["capped"] += part.capped
        entry["turns"] += part.turns_total
        entry["wins"] = [a + b for a, b in zip(entry["wins"], part.wins, strict=True)]
    out = []
    for (variant, players), e in pooled.items():
        g = e["games"]
        fair = e["slots"] / (g * players) if g else 0.0
        out.append(
            {
                "variant": variant,
                "players": players,
                "games": g,
                "fair_share": _r(fair),
                "seats": [{"seat": s, **_rate(e["wins"][s], g, fair)} for s in range(players)],
                "draws": _rate(e["draws"], g),
                "capped": _rate(e["capped"], g),
                "mean_turns": _r(e["turns"] / g if g else 0.0),
                # Not in the BH family (it pools cells already tested): shown unadjusted.
                "test": _test(e["team_wins"], [g] * len(e["teams"]))
                if len(e["teams"]) < players
                else _test(e["wins"], [g] * players),
            }
        )
    return out


def game_rows(spec: SweepSpec, results: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One row per game: the report's per-game records. In (cell, game index) order when
    `results` is a list; a stream (chunks read from Redis) is passed on chunk by chunk as it
    comes, so memory stays flat (records.py sorts each cell's Parquet parts by seed)."""
    cells = spec.cells()
    for res in ordered(results) if isinstance(results, list) else results:
        cell = cells[res["cell"]]
        facts = res.get("facts") or []
        for k in range(res["games"]):
            index = res["start"] + k
            row: dict[str, Any] = {
                "cell": cell.index,
                "variant": cell.variant,
                "players": cell.players,
                "game_index": index,
                "seed": game_seed(spec, index),
                "bots": ";".join(cell.seat_bots(index)),
                "winners": ";".join(str(s) for s in res["winners"][k]),
                "turns": res["turns"][k],
                "decisions": res["decisions"][k],
                "capped": res["capped"][k],
            }
            if facts:
                for name, labels in facts[k].get("groups", {}).items():
                    row[f"{name}_by_seat"] = ";".join(labels)
                row["played"] = "|".join(
                    f"{lab}={','.join(map(str, seats))}" for lab, seats in facts[k].get("played", {}).items()
                )
                row.update(card_columns(facts[k]))  # opening, drawn, held (cards.py)
            yield row
