"""Who a win-rate test is about: seats, or teams where seats are partners.

In a team game partners win together (Tricky Cultists, TK-2: seats 0+2 against 1+3), so
counting each partner's win as its own trial doubles every test statistic; the team is
the unit, taken from `GameSpec.teams`. With exactly two units one is the mirror of the
other (its rate is one minus the other's, less the draws), so only the first is tested:
testing both would count one question twice in the Benjamini-Hochberg family.
"""

from __future__ import annotations

from services.engines.core.game import GameSpec


def win_units(gspec: GameSpec, players: int) -> list[tuple[str, list[int]]]:
    """(name, seats) of every unit whose win rate is reported: "seat 2" or "team 0"."""
    if gspec.has_partners(players):
        return [(f"team {t}", seats) for t, seats in enumerate(gspec.team_seats(players))]
    return [(f"seat {s}", [s]) for s in range(players)]


def tested_units(gspec: GameSpec, players: int) -> list[tuple[str, list[int]]]:
    """The units whose win rate gets a test: all of them, or the first when there are two."""
    units = win_units(gspec, players)
    return units[:1] if len(units) == 2 else units
