"""Deck and zone helpers shared by the three games.

Cards are small integers (a card id); each game keeps a table from id to kind. A zone is
a plain list of ids with the top of a deck at the end, so drawing is `pop()`. Plain lists
keep cloning and serialising cheap, which is most of what random play spends its time on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .errors import BadState
from .rng import Rng


def build_deck(composition: Sequence[tuple[int, int]]) -> list[int]:
    """Kind table for a deck: `[(kind, count), ...]` -> list where index = card id."""
    kinds: list[int] = []
    for kind, count in composition:
        kinds.extend([kind] * count)
    return kinds


def draw(deck: list[int], discard: list[int], rng: Rng) -> int | None:
    """Top card of `deck`; an empty deck is first refilled by shuffling `discard` into it.

    Returns None only when both are empty (TC-4's "stop drawing"; CC's reshuffle rule).
    """
    if not deck:
        if not discard:
            return None
        deck.extend(discard)
        discard.clear()
        rng.shuffle(deck)
    return deck.pop()


def check_conservation(zones: Iterable[Sequence[int]], total: int, what: str = "card") -> None:
    """Every id in range(total) sits in exactly one zone."""
    seen: list[int] = []
    for zone in zones:
        seen.extend(zone)
    if len(seen) != total or sorted(seen) != list(range(total)):
        counts: dict[int, int] = {}
        for c in seen:
            counts[c] = counts.get(c, 0) + 1
        doubled = sorted(c for c, n in counts.items() if n > 1)
        missing = sorted(set(range(total)) - set(counts))
        odd = sorted(c for c in counts if not (isinstance(c, int) and 0 <= c < total))
        raise BadState(
            f"{what}s are not each in exactly one place: doubled {doubled[:10]}, "
            f"missing {missing[:10]}, unknown {odd[:10]}"
        )


def redeal(zones: Sequence[list[int]], rng: Rng) -> None:
    """Pool the cards of `zones`, shuffle, and refill each zone to its old size, in place.

    What an observer cannot see (other hands, deck order) is re-dealt this way for
    determinisation and leak tests; sizes stay, so public facts stay. The pool is sorted
    before the shuffle, so the result depends only on which cards are hidden and on `rng`,
    never on where they lay: a bot that re-deals cannot learn the true deal from it.
    """
    pool = sorted(c for zone in zones for c in zone)
    rng.shuffle(pool)
    at = 0
    for zone in zones:
        n = len(zone)
        zone[:] = pool[at : at + n]
        at += n
