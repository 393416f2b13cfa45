"""The end screen of a finished table (issue 31): why the game ended, every seat's final
score and how it was made, the ranking, the rating change on a rated table, and the way on
(the replay at the decisive move, a rematch).

Everything here is public once the game is over: the engine's final scores (`Table.scores`,
from `State.score_breakdown`), its returns (what ratings rank by), the public log's lines of
the final move, and the ratings the settlement wrote. Nothing is recomputed from the rules.
"""

from __future__ import annotations

from typing import Any

from services.platform.context import Platform
from services.platform.store import Table

from .history import name_seats

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


def ending(gw: Platform, table: Table, names: list[str], me: int) -> dict[str, Any]:
    """What the end screen shows for a finished `table`, read by seat `me` (-1: a spectator)."""
    scores = {s["seat"]: s for s in (table.scores or [])}
    returns = list(table.returns or [0.0] * table.players)
    change = gw.ratings.change(table.id) if table.rated else {}
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
                "key": (returns[seat], score["total"]),
                "parts": ", ".join(parts),
                "rating": change.get(seat),
            }
        )
    # A seat's place: one more than the seats ahead of it (by result, then score), so a
    # tie shares a place.
    for row in rows:
        row["place"] = _ordinal(1 + sum(other["key"] > row["key"] for other in rows))
    rows.sort(key=lambda r: r["key"], reverse=True)
    final = [
        e for e in gw.store.log(table.id) if e.get("version") == table.version and e.get("kind") != "draw"
    ]
    return {
        "why": [name_seats(e["text"], names, me) for e in final],
        "rows": rows,
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
