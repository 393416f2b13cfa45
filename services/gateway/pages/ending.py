"""The end screen of a finished table (issue 31): why the game ended, every seat's final
score and how it was made, the ranking, the rating change on a rated table, and the way on
(the replay at the decisive move, a rematch).

Everything here is public once the game is over: the engine's final scores (`Table.scores`,
from `State.score_breakdown`), its returns (what ratings rank by), the public log's lines of
the final move, and the ratings the settlement wrote. Nothing is recomputed from the rules.
"""

from __future__ import annotations

import re
from typing import Any

from services.engines.registry import load_game
from services.platform.context import Platform
from services.platform.store import Table

from .history import name_seats
from .present import presentation

# Score parts in words; a part not listed reads as its name with spaces.
PART_WORDS = {
    "candles": "candles lit",
    "candles_to_win": "candles needed",
    "favor_on_stack": "favor on the stack",
    "shrine_food": "food in the Shrine",
    "food_needed": "food needed",
    "cult_members": "cult members",
    "agenda": "agenda",
    "tricks": "tricks",
    "bonus": "bonus suit",
    "suspicion": "suspicion",
    "team_total": "team total",
    "result": "result",
}


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _ordinal(place: int) -> str:
    return f"{place}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(place if place < 20 else place % 10, 'th') }"


_ROUND_SCORES = re.compile(r"^round (\d+) scores: \[([^\]]*)\]")


def _round_scores(text: str, names: list[str], me: int) -> str | None:
    """Tricky Cultists' "round 4 scores: [9, 5, 2, 6]" by name, as the page's log gives it
    (common.js `logLines`); None for any other line."""
    found = _ROUND_SCORES.match(text)
    if not found:
        return None
    points = [p.strip() for p in found.group(2).split(",")]
    named = [
        f"{'you' if s == me else names[s] if s < len(names) else f'seat {s}'} {p}"
        for s, p in enumerate(points)
    ]
    return f"round {found.group(1)} scores: {', '.join(named)}"


def _deciding(score: dict[str, Any]) -> float:
    """The score the rules rank by: a team game's team total (TK-11: partners share their
    team's result), else the seat's own total."""
    return float(score["parts"].get("team_total", score["total"]))


def _seats_words(seats: list[int], names: list[str], me: int) -> str:
    """ "you and Steady bot 2", "Steady bot 1 and Steady bot 3"."""
    words = ["you" if s == me else names[s] for s in sorted(seats, key=lambda s: s != me)]
    return " and ".join(words)


def _team_result(
    rows: list[dict[str, Any]], teams: list[list[int]], names: list[str], me: int, draw: bool
) -> str | None:
    """A team game's result in words (TK-11), from the team totals; None for a game without
    partners, and for a draw the totals did not make (G-5's turn cap: its own line says so)."""
    total = {r["seat"]: r["score"]["parts"].get("team_total") for r in rows}
    if len(teams) != 2 or any(len(t) < 2 for t in teams) or None in total.values():
        return None
    high, low = sorted(teams, key=lambda t: total[t[0]], reverse=True)
    tied = total[high[0]] == total[low[0]]
    if draw != tied:
        return None
    figures = f"{_number(total[high[0]])} to {_number(total[low[0]])}"
    if tied:
        return f"the team totals are equal, {figures}: a draw"
    return f"the team of {_seats_words(high, names, me)} has the higher total, {figures}"


def _ties_broken(rows: list[dict[str, Any]], table: Table, names: list[str], me: int) -> list[str]:
    """Why a seat that scored as much as a winner did not win: the game's tie rule."""
    rule = presentation(table.game).tie_rule
    best = {_deciding(r["score"]) for r in rows if r["won"]}
    tied = [r["seat"] for r in rows if not r["won"] and _deciding(r["score"]) in best]
    if not rule or not tied:
        return []
    who = _seats_words(tied, names, me)
    verb = "have" if len(tied) > 1 or tied == [me] else "has"
    return [f"{who} {verb} as much as the winner, but {rule}"]


def ending(gw: Platform, table: Table, names: list[str], me: int) -> dict[str, Any]:
    """What the end screen shows for a finished `table`, read by seat `me` (-1: a spectator).

    The headline (panel.html: the winners, or "A draw"), the reason and the ranking agree:
    a seat's place is by its result first (the engine's returns), then by the score the
    rules rank by; in a draw nobody is ahead, so every seat shares 1st place."""
    scores = {s["seat"]: s for s in (table.scores or [])}
    returns = list(table.returns or [0.0] * table.players)
    change = gw.ratings.change(table.id) if table.rated else {}
    draw = not table.winners
    rows: list[dict[str, Any]] = []
    for seat in range(table.players):
        score = scores.get(seat, {"total": returns[seat], "parts": {}})
        parts = [f"{PART_WORDS.get(k, k.replace('_', ' '))} {_number(v)}" for k, v in score["parts"].items()]
        rows.append(
            {
                "seat": seat,
                "name": "you" if seat == me else names[seat],
                "won": seat in table.winners,
                "total": _number(score["total"]),
                "key": (0.0, 0.0) if draw else (returns[seat], _deciding(score)),
                "parts": ", ".join(parts),
                "rating": change.get(seat),
                "score": score,
            }
        )
    # A seat's place: one more than the seats ahead of it, so a tie shares a place.
    for row in rows:
        ahead = sum(other["key"] > row["key"] for other in rows)
        shared = sum(other["key"] == row["key"] for other in rows) > 1
        row["place"] = _ordinal(1 + ahead)
        row["shared"] = shared
    # Best first; within a shared place, the higher own score, then the lower seat.
    rows.sort(key=lambda r: (r["key"], float(r["score"]["total"]), -r["seat"]), reverse=True)
    final = [
        e for e in gw.store.log(table.id) if e.get("version") == table.version and e.get("kind") != "draw"
    ]
    why = [_round_scores(e["text"], names, me) or name_seats(e["text"], names, me) for e in final]
    team = _team_result(rows, load_game(table.game).team_seats(table.players), names, me, draw)
    if team is not None:
        why.append(team)
    why += _ties_broken(rows, table, names, me)
    for row in rows:
        del row["score"]
    return {
        "why": why,
        "rows": rows,
        "draw": draw,
        "rated": table.rated,
        "decisive_step": table.version,
        "rematch": {
            "game": table.game,
            "config": table.config,
            "decision_seconds": table.decision_seconds,
            "seats": [
                {"kind": "bot", "bot": s.bot} if s.kind == "bot" else {"kind": "human"} for s in table.seats
            ],
            "seat": me,
        },
    }
