"""The seat-deadline rule lives twice: in lua/schedule.lua, which the scripts that change
seats outside a move run inside Redis, and in seat_deadlines.py, which works out a move's
deadlines on the gateway so the commit script stays cheap. A table whose move and whose
`present` disagree would give a seat two different clocks, so this runs both on the same
seats, in the real Redis, and asks for the same strings, field for field."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.platform.seat_deadlines import SeatTimes, schedule
from services.platform.store import lua_source

# Calls schedule.lua's function as the scripts do, on seats passed in ARGV (one HMGET
# reply's layout: kind, away, deadline per seat) and returns the earliest deadline, then
# the fields it would write.
_WRAPPER = """
local players = tonumber(ARGV[1])
local n = tonumber(ARGV[7])
local acting = {}
for i = 1, n do acting[i] = tonumber(ARGV[7 + i]) end
local f = {}
for i = 1, 3 * players do f[i] = ARGV[7 + n + i] end
local out = {}
local due = schedule(f, 0, players, acting, tonumber(ARGV[2]), tonumber(ARGV[3]),
  tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), out)
table.insert(out, 1, due)
return out
"""

_NOW = 1_764_000_000.0


@st.composite
def _positions(draw: st.DrawFn) -> tuple[list[SeatTimes], list[int], float, float, float, float, int]:
    players = draw(st.integers(2, 6))
    seats: list[SeatTimes] = []
    for _ in range(players):
        kind = draw(st.sampled_from(["human", "bot"]))
        away = draw(st.booleans())
        deadline = draw(st.none() | st.integers(0, 10**6).map(lambda ms: round(_NOW + ms / 1000, 3)))
        seats.append((kind, away, deadline))
    acting = draw(st.lists(st.integers(0, players - 1), unique=True, max_size=players))
    decision_s = draw(st.sampled_from([0.5, 5.0, 30.0, 45.5, 600.0, 86_400.0]))
    now = _NOW + draw(st.integers(0, 10**6)) / 1000
    bot_s = draw(st.sampled_from([1.0, 2.5, 10.0]))
    away_s = draw(st.sampled_from([3.0, 15.0, 60.0]))
    reset = draw(st.integers(-2, players - 1))  # -1: every seat; -2: none
    return seats, sorted(acting), decision_s, now, bot_s, away_s, reset


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(position=_positions())
def test_the_gateway_and_the_scripts_give_every_seat_the_same_deadline(
    redis_client: Any, position: Any
) -> None:
    seats, acting, decision_s, now, bot_s, away_s, reset = position
    argv: list[Any] = [len(seats), repr(decision_s), repr(now), repr(bot_s), repr(away_s), reset, len(acting)]
    argv += acting
    for kind, away, deadline in seats:
        argv += [kind, "1" if away else "", "" if deadline is None else f"{deadline:.3f}"]
    lua = [v.decode() for v in redis_client.eval(lua_source("schedule") + _WRAPPER, 0, *argv)]

    out: list[Any] = []
    due = schedule(seats, acting, decision_s, now, bot_s, away_s, reset, out)

    assert [due, *out] == lua
