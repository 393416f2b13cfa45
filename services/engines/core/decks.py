"""Deck and zone helpers shared by the three games.

Cards are small integers (a card id); each game keeps a table from id to kind. A zone is
a plain list of ids with the top of a deck at the end, so drawing is `pop()`. Plain lists
keep cloning and serialising cheap, which is most of what random play spends its time on.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from .errors import BadState
from .rng import Rng


def build_deck(composition: Sequence[tuple[int, int]]) -> list[int]:
    """Kind table for a deck: `[(kind, count), ...]` -> list where index = card id."""
    kinds: list[int] = []
    for kind, count in composition:
        kinds.extend([kind] * count)
    return kinds


@functools.cache
def kind_counts(kinds: tuple[int, ...]) -> dict[int, int]:
    """Cards of each kind in a kind table: a coupled deal's reference deck (rng.coupled_order)."""
    counts: dict[int, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def draw(deck: list[int], discard: list[int], rng: Rng, tags: tuple[int, ...] | None = None) -> int | None:
    """Top card of `deck`; an empty deck is first refilled by shuffling `discard` into it,
    with Fisher-Yates, or with the keyed shuffle over `tags` when the state deals keyed
    (`State.shuffle_cards`).

    Returns None only when both are empty (TC-4's "stop drawing"; CC's reshuffle rule).
    """
    if not deck:
        if not discard:
            return None
        deck.extend(discard)
        discard.clear()
        if tags is None:
            rng.shuffle(deck)
        else:
            rng.keyed_shuffle(deck, tags)
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


def redeal_keeping(zones: Sequence[list[int]], fixed: set[int], rng: Rng) -> None:
    """`redeal`, except that cards in `fixed` stay exactly where they lie: the cards a
    seat remembers (a hand it was shown, the top cards it put back) in its determinisations."""
    if not fixed:
        redeal(zones, rng)
        return
    free = [[c for c in zone if c not in fixed] for zone in zones]
    redeal(free, rng)
    for zone, dealt in zip(zones, free, strict=True):
        it = iter(dealt)
        zone[:] = [c if c in fixed else next(it) for c in zone]


def shuffle_in_place(zone: list[int], cards: set[int], rng: Rng) -> None:
    """Shuffle the members of `cards` among the places they hold in `zone`, leaving the
    rest alone: a seat knows what is in the deck, not in which order. Sorted first, so the
    result never depends on the true order."""
    spots = [i for i, c in enumerate(zone) if c in cards]
    moved = sorted(zone[i] for i in spots)
    rng.shuffle(moved)
    for i, c in zip(spots, moved, strict=True):
        zone[i] = c


def fits(zone: Sequence[int], limits: Sequence[Sequence[int]], kind_of: Sequence[int]) -> bool:
    """Does `zone` hold at most `bound` cards whose kind is in `mask`, for each limit?"""
    return all(sum(1 for c in zone if mask >> kind_of[c] & 1) <= bound for mask, bound in limits)


def redeal_limited(
    zones: Sequence[list[int]],
    limits: dict[int, Sequence[Sequence[int]]],
    kind_of: Sequence[int],
    rng: Rng,
    tries: int = 2,
) -> None:
    """`redeal`, keeping what the observer has learnt about some zones' kinds of card.

    `limits[i]` lists `(mask, bound)` pairs for zone `i`: at most `bound` of its cards have
    a kind (a suit) in `mask` (bound 0: the zone is known to hold none, a revealed void).
    A plain re-deal is tried first (exactly uniform when it fits); otherwise the number of
    cards of each kind per limited zone is found by a small randomised search over kind
    counts, the cards of each kind are dealt out at random, and the rest fill the other
    zones. Like `redeal`, the result depends only on which cards are hidden, the limits
    and `rng`, never on where the cards lay; the true deal always fits, so a deal exists.
    """
    for _ in range(tries):
        redeal(zones, rng)
        if all(fits(zones[i], lim, kind_of) for i, lim in limits.items()):
            return
    pool = sorted(c for zone in zones for c in zone)
    rng.shuffle(pool)
    kinds = max(kind_of) + 1
    by_kind: list[list[int]] = [[] for _ in range(kinds)]
    for c in pool:
        by_kind[kind_of[c]].append(c)
    order = sorted(limits)
    counts = _kind_counts([len(zones[i]) for i in order], [limits[i] for i in order], by_kind, rng)
    if counts is None:
        raise BadState("no deal of the hidden cards fits what the table has seen")
    rest_zones = [z for i, z in enumerate(zones) if i not in limits]
    dealt: dict[int, list[int]] = {}
    for i, row in zip(order, counts, strict=True):
        dealt[i] = [by_kind[k].pop() for k, count in enumerate(row) for _ in range(count)]
    rest = [c for cards in by_kind for c in cards]
    rng.shuffle(rest)
    at = 0
    for zone in rest_zones:
        n = len(zone)
        zone[:] = rest[at : at + n]
        at += n
    for i, cards in dealt.items():
        zones[i][:] = cards


def _kind_counts(
    sizes: list[int], limits: list[Sequence[Sequence[int]]], by_kind: list[list[int]], rng: Rng
) -> list[list[int]] | None:
    """Cards of each kind per limited zone: sizes met, limits kept, supply not exceeded.

    Depth-first over (zone, kind), trying counts nearest each kind's fair share first (the
    share rounded up or down at random), so the search usually succeeds at once and lands
    near a typical deal.
    """
    kinds = len(by_kind)
    left = [len(cards) for cards in by_kind]
    rows = [[0] * kinds for _ in sizes]

    def room(z: int, k: int) -> int:
        most = left[k]
        for mask, bound in limits[z]:
            if mask >> k & 1:
                most = min(most, bound - sum(rows[z][j] for j in range(k) if mask >> j & 1))
        return most

    def place(z: int, k: int, remaining: int) -> bool:
        if z == len(sizes):
            return True
        if k == kinds:
            return remaining == 0 and place(z + 1, 0, sizes[z + 1] if z + 1 < len(sizes) else 0)
        later = sum(left[k + 1 :])
        lo, hi = max(0, remaining - later), min(remaining, room(z, k))
        if lo > hi:
            return False
        share = remaining * left[k] / (left[k] + later) if left[k] + later else 0.0
        first = min(hi, max(lo, int(share + rng.below(1000) / 1000)))  # fair share, rounded at random
        values = sorted(range(lo, hi + 1), key=lambda c: abs(c - first))
        for c in values:
            rows[z][k] = c
            left[k] -= c
            if place(z, k + 1, remaining - c):
                return True
            left[k] += c
        rows[z][k] = 0
        return False

    return rows if place(0, 0, sizes[0] if sizes else 0) else None
