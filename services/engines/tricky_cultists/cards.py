"""The Cult deck and the agenda cards of Tricky Cultists, as data.

A Cult card's id is `suit * ranks + (rank - 1)`, so within a suit a higher id is a higher
card and `id // ranks` is its suit: trick comparisons are plain integer comparisons. The
default deck (TK-1) has suits Blue, Red, Green, Purple (ids 0-12, 13-25, 26-38, 39-51).

An agenda card's id `a` is of kind `a % len(AGENDAS)`; `agenda_copies` in the config puts
several cards of each kind in the agenda deck (one each by default, as printed).
"""

from __future__ import annotations

# TK-7: each suit's ability is named by the suit; a config's suits are drawn from these.
SUIT_NAMES = ("Blue", "Red", "Green", "Purple")

# TK-3: the eight agendas, in the order of the rulings table.
AGENDAS = (
    "Lead First Trick",
    "Choose Bonus Suit",
    "Win Most Tricks",
    "Win No Tricks",
    "Win Last Trick",
    "Win Exactly Three",
    "Trigger Most Abilities",
    "Clean Hands",
)
(
    LEAD_FIRST,
    BONUS_SUIT,
    MOST_TRICKS,
    NO_TRICKS,
    LAST_TRICK,
    EXACTLY_THREE,
    MOST_ABILITIES,
    CLEAN_HANDS,
) = range(len(AGENDAS))

# The config's field-name prefix for each agenda's success / failure VP (TK-3).
AGENDA_KEYS = (
    "lead_first",
    "bonus_suit",
    "most_tricks",
    "no_tricks",
    "last_trick",
    "exactly_three",
    "most_abilities",
    "clean_hands",
)


def agenda_kind(agenda: int) -> int:
    return agenda % len(AGENDAS)


def agenda_name(agenda: int) -> str:
    return AGENDAS[agenda % len(AGENDAS)]
