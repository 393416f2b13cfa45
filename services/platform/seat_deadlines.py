"""The rule for seat deadlines (lua/schedule.lua), for the move commit, run on the gateway.

A move is the platform's hottest write, and working out its deadlines inside Lua (each
seat's kind, away flag and deadline read by HMGET, then strings built and formatted there)
was most of the commit script's own Redis CPU. The gateway has read all of that with the
table (the HGETALL of the move's request), so it computes the move's deadline fields here
and the script only checks they still hold: the version (any move changes it) and
`seats_v`, which every script that changes a seat's kind, away flag or deadline outside a
move (present, leave, reschedule) bumps. Either one changed: the commit writes nothing
(store.py reloads the seats and computes again when only `seats_v` moved).

The same rule as schedule.lua, which the other scripts still run, to the same strings: a
seat keeps a deadline it has, except the seat named by `reset` (-1: every seat); bots get
`bot_s`, away seats the shorter of `away_s` and the table's time, humans the table's time;
Python's `%.3f` formats a float as Lua's string.format does (both are C's printf).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# One seat as the rule needs it: (kind, away, deadline), in seat order.
SeatTimes = tuple[str, bool, float | None]


def schedule(
    seats: Sequence[SeatTimes],
    acting: Sequence[int],
    decision_s: float,
    now: float,
    bot_s: float,
    away_s: float,
    reset: int,
    out: list[Any],
) -> str:
    """Add the changed `deadline:i` fields to `out` (field, value, ...); the earliest
    deadline as the script would store it ('' when nobody must act)."""
    earliest: float | None = None
    for s, (kind, away, deadline) in enumerate(seats):
        if s not in acting:
            if deadline is not None:
                out += [f"deadline:{s}", ""]
            continue
        at = deadline
        if at is None or reset in (-1, s):
            wait = decision_s
            if kind == "bot":
                wait = bot_s
            elif away:
                wait = min(away_s, wait)
            at = now + wait
            out += [f"deadline:{s}", f"{at:.3f}"]
        if earliest is None or at < earliest:
            earliest = at
    return "" if earliest is None else f"{earliest:.3f}"
