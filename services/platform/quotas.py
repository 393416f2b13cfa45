"""What one designer may have the platform compute at once (issue 27, item 2).

Sweeps and tunes are the platform's most expensive requests: one spec can ask for
millions of games, each with search bots in every seat. Each designer therefore has
quotas, checked by the gateway before anything is planned or queued:

- `sweeps_in_flight`, `tunes_in_flight`: their queued or running sweeps and tunes;
- `games_in_flight`: games still to play over all of them, the new one included;
- `bot_iterations_per_game`: search iterations per decision summed over one game's seats
  (an IS-MCTS seat costs its `iterations`, 200 when unnamed; a sweep refuses wall-clock
  `ms` budgets anyway, for replays); a cheap bot costs nothing;
- `max_chunks`: chunk tasks one sweep may plan (the spec parser refuses more, in a time
  that does not grow with the spec).

A count over its quota is 429 `quota_exceeded` (it passes once earlier work finishes); a
spec that could never fit (its bots alone) is 403 `over_quota`. Both name the quota and
its limit. The counts are read, then the work is queued: two submits racing from one
designer can pass one quota by one sweep's worth, never more than the gateway's workers.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from services.engines.core.bots import parse_bot_spec

from .errors import PlatformError

ISMCTS_DEFAULT_ITERATIONS = 200  # services/engines/core/ismcts.py's default


@dataclass(frozen=True)
class DesignerQuotas:
    sweeps_in_flight: int = 4
    tunes_in_flight: int = 2
    games_in_flight: int = 2_000_000
    bot_iterations_per_game: int = 2000
    max_chunks: int = 5000

    @classmethod
    def from_env(cls) -> DesignerQuotas:
        """QUOTA_SWEEPS_IN_FLIGHT, QUOTA_TUNES_IN_FLIGHT, QUOTA_GAMES_IN_FLIGHT,
        QUOTA_BOT_ITERATIONS_PER_GAME, QUOTA_MAX_CHUNKS (whole numbers)."""
        values = {}
        for name in ("sweeps_in_flight", "tunes_in_flight", "games_in_flight", "bot_iterations_per_game",
                     "max_chunks"):  # fmt: skip
            raw = os.environ.get(f"QUOTA_{name.upper()}")
            if raw:
                values[name] = int(raw)
        return cls(**values)


def seat_iterations(bot: str) -> int:
    """Search iterations one seat's bot spends per decision (0 for a bot that does not search)."""
    name, params = parse_bot_spec(bot)
    if name != "ismcts":
        return 0
    return int(float(params.get("iterations", ISMCTS_DEFAULT_ITERATIONS)))


def check_bot_budget(quotas: DesignerQuotas, games: Iterable[Iterable[str]]) -> None:
    """403 `over_quota` if one game's seats (each of `games` lists a game's bots) search
    more per decision, summed, than `bot_iterations_per_game`."""
    limit = quotas.bot_iterations_per_game
    for seats in games:
        seats = list(seats)
        spent = sum(seat_iterations(b) for b in seats)
        if spent > limit:
            raise PlatformError(
                403,
                "over_quota",
                f"a game of {', '.join(seats)} searches {spent} iterations per decision over its seats; "
                f"a designer's games may search at most {limit} (quota bot_iterations_per_game)",
                quota="bot_iterations_per_game",
                limit=limit,
            )


def check_in_flight(quotas: DesignerQuotas, kind: str, running: int, games_left: int, new_games: int) -> None:
    """429 `quota_exceeded` if one more sweep (or tune) of `new_games` games would pass the
    designer's `<kind>s_in_flight` or `games_in_flight`."""
    limit = quotas.tunes_in_flight if kind == "tune" else quotas.sweeps_in_flight
    if running + 1 > limit:
        raise PlatformError(
            429,
            "quota_exceeded",
            f"you have {running} {kind}s queued or running, the most a designer may (quota {kind}s_in_flight); "
            "submit again once one finishes, or cancel one",
            quota=f"{kind}s_in_flight",
            limit=limit,
            retry_after=60,
        )
    if games_left + new_games > quotas.games_in_flight:
        raise PlatformError(
            429,
            "quota_exceeded",
            f"{games_left:,} games of yours are still to play and this asks {new_games:,} more; a designer may "
            f"have at most {quotas.games_in_flight:,} in flight (quota games_in_flight)",
            quota="games_in_flight",
            limit=quotas.games_in_flight,
            retry_after=60,
        )
