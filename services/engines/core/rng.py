# cython: boundscheck=False, wraparound=False
# (Compiled, an index is not checked against its list, tuple or view, nor wrapped when
# negative: every index below is a counted one in range, and a card id, the one index
# that comes from outside, is checked against its tags by hand in `keyed_order`.)
"""The one seeded random generator that lives inside a game state (rulings G-2).

Python's `random.Random` carries 2.5 KB of state, which would blow the 4 KB budget for a
serialised game, so the state holds a SplitMix64 generator instead: one 64-bit integer,
the same sequence on every machine and Python version, and cheap enough in pure Python
for the few draws a card game makes (shuffles, random steals).
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

# Typed as C 64-bit integers in the compiled build (rng.pxd, beside this file), where
# `_mix` then runs in machine arithmetic: its products wrap at 2**64 exactly as the masks
# below cut them here, so both builds draw the same numbers.
_MASK = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_LOW32 = (1 << 32) - 1


def mix_seed(*parts: int | str) -> int:
    """Fold several seed parts (master seed, chunk, game index...) into one 64-bit seed."""
    h = 0x243F6A8885A308D3
    for part in parts:
        if isinstance(part, str):
            part = int.from_bytes(part.encode(), "little")
        h = _splitmix((h ^ (part & _MASK)) & _MASK)
    return h


def _splitmix(x: int) -> int:
    return _mix((x + _GAMMA) & _MASK)


def _mix(z: int) -> int:
    """SplitMix64's output function of a 64-bit state (`z` below 2**64)."""
    z = ((z ^ (z >> 30)) * _MIX1) & _MASK
    z = ((z ^ (z >> 27)) * _MIX2) & _MASK
    return z ^ (z >> 31)


def _shuffle(items: MutableSequence[T], state: int) -> int:
    """`Rng.shuffle` on the generator's state, returning the state after it: a module
    function so that the compiled build runs it in C 64-bit integers (rng.pxd). Each step
    is `below(i + 1)`: `next_u64`, then Lemire's `(x * n) >> 64` taken in 32-bit halves,
    the same integer, whose parts stay below 2**64 (n < 2**32, so at most 2**32 items)."""
    size = len(items)
    if size >= 1 << 32:
        raise ValueError("shuffle() takes fewer than 2**32 items")
    for i in range(size - 1, 0, -1):
        state = (state + _GAMMA) & _MASK
        x = _mix(state)
        n = i + 1
        j = ((x >> 32) * n + (((x & _LOW32) * n) >> 32)) >> 32
        items[i], items[j] = items[j], items[i]
    return state


# Keyed shuffles (docs/fairness.md, "Coupled deals"): a card's key is the mix of one salt
# drawn for the shuffle and the card's tag, a fixed function of its kind and copy index
# (`card_tags`). The key's low 16 bits are replaced by the card's id, so one sort of plain
# integers orders the cards and reads the ids back; decks hold fewer than 2**16 cards.
_ID_BITS = 16
_ID_MASK = (1 << _ID_BITS) - 1
_KEY_MASK = _MASK ^ _ID_MASK


@functools.cache
def range_tags(size: int) -> tuple[int, ...]:
    """`card_tags` of a deck whose every card is its own kind (ids 0..size-1)."""
    return _card_tags(tuple(range(size)))


def card_tags(kinds: Sequence[int]) -> tuple[int, ...]:
    """Card id -> 64-bit tag of (kind, copy index): the n-th card of a kind gets the same
    tag whatever the other kinds' counts, so a deck with one Donut fewer keeps every other
    card's tag, and so its key in every keyed shuffle."""
    return _card_tags(tuple(kinds))


@functools.cache
def _card_tags(kinds: tuple[int, ...]) -> tuple[int, ...]:
    if len(kinds) > _ID_MASK:
        raise ValueError(f"a keyed shuffle takes decks of fewer than {_ID_MASK + 1} cards")
    copies: dict[int, int] = {}
    tags = []
    for kind in kinds:
        copy = copies.get(kind, 0)
        copies[kind] = copy + 1
        tags.append(_splitmix(((kind & _LOW32) << 32) | copy))
    return tuple(tags)


def _keyed_shuffle(items: list[int], tags: tuple[int, ...], state: int) -> int:
    """`Rng.keyed_shuffle` on the generator's state, returning the state after it: one
    draw (the salt) whatever the deck's size, then the cards sorted by their keys."""
    state = (state + _GAMMA) & _MASK
    keyed_order(items, tags, _mix(state))
    return state


def keyed_order(items: list[int], tags: tuple[int, ...], salt: int) -> None:
    """Order the card ids of `items` by their keys under `salt` (both generators' keyed
    shuffle: the salt is the one draw they make). The keys sit in a C array of 64-bit words
    (`array("Q")`, a typed view once compiled) and are sorted there (`_sort_keys`), so a
    shuffle costs a few nanoseconds a card, as Fisher-Yates does, not a Python int each."""
    n = len(items)
    size = len(tags)
    view = _scratch(n)
    for i in range(n):
        c = items[i]
        if c < 0 or c >= size:
            raise IndexError(f"card id {c} has no tag (the deck's tags cover 0..{size - 1})")
        t = tags[c]
        view[i] = (_mix(salt ^ t) & _KEY_MASK) | c
    _sort_keys(view, n)
    for i in range(n):
        k = view[i]
        items[i] = k & _ID_MASK


# The keys' words, reused by every compiled shuffle of up to _SCRATCH_WORDS // 4 cards: a
# compiled shuffle holds the GIL from its first key to its last id, so no other thread can
# write them meanwhile. Interpreted, a thread may be switched out inside the loop, so each
# shuffle there takes its own array (`_COMPILED`: `_mix` is a C function, not a Python one).
_SCRATCH_WORDS = 4096
_SCRATCH = array("Q", bytes(8 * _SCRATCH_WORDS))
_COMPILED = type(_mix).__name__ != "function"


def _scratch(n: int) -> Any:
    """Words for `_sort_keys` of `n` keys: the keys, as many again, and the buckets."""
    words = 2 * n + (1 << _bit_length(n))
    if _COMPILED and words <= _SCRATCH_WORDS:
        return _SCRATCH
    return array("Q", bytes(8 * words))


def _bit_length(n: int) -> int:
    """`n.bit_length()` for n >= 0, in C integers once compiled."""
    bits = 0
    while n >> bits:
        bits += 1
    return bits


def _sort_keys(view: Any, n: int) -> None:
    """Sort the first `n` words of `view` in place, ascending (keys are distinct), using
    the words after them (`_scratch`). The keys are uniform, so a counting pass on their top
    bits (one bucket per card or so) puts each within a few places of its own, and an
    insertion pass finishes: linear time, against a comparison sort's n log n of
    mispredicted branches (Shell sort took 5x Fisher-Yates' time on 52 cards)."""
    if n < 2:
        return
    bits = _bit_length(n)
    shift = 64 - bits
    out = n
    counts = 2 * n
    buckets = 1 << bits
    for b in range(buckets):
        view[counts + b] = 0
    for i in range(n):
        view[counts + (view[i] >> shift)] += 1
    total = 0
    for b in range(buckets):
        m = view[counts + b]
        view[counts + b] = total
        total += m
    for i in range(n):
        k = view[i]
        b = k >> shift
        place = view[counts + b]
        view[out + place] = k
        view[counts + b] = place + 1
    view[0] = view[out]
    for i in range(1, n):
        k = view[out + i]
        j = i
        while j > 0 and view[j - 1] > k:
            view[j] = view[j - 1]
            j -= 1
        view[j] = k


def coupled_order(items: list[int], kinds: Sequence[int], reference: Mapping[int, int], salt: int) -> None:
    """Order a fresh deck's card ids coupled with every other deck of the same game: the
    deck with one card fewer than `reference` deals every other card to the same place.

    The cards of the reference deck (`reference[kind]` copies of each kind, joined by this
    deck's own where it has more) are ordered by their keys under `salt`, as
    `keyed_order` would. Dealt from the top, this deck keeps its own cards where they lie
    among the first len(items) places; a place that holds a reference card this deck lacks
    (a hole) takes this deck's next card from below those places, in dealing order. So a
    deck one Donut short of the reference differs from it in two places, the missing
    Donut's (now the bottom card) and the bottom, instead of every card after the Donut
    moving up one. Uniform: the rule looks only at which places hold which reference
    cards, never at this deck's labels, so relabelling this deck's cards commutes with it,
    and a uniform reference order gives each order of this deck alike."""
    tags, ids = _coupled_plan(tuple(kinds), tuple(sorted(items)), tuple(sorted(reference.items())))
    _coupled_fill(items, tags, ids, salt)


@functools.cache
def _coupled_plan(
    kinds: tuple[int, ...], items: tuple[int, ...], reference: tuple[tuple[int, int], ...]
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The reference deck of `coupled_order` as (tag of each reference card, this deck's id
    for it or -1), once per deck and reference: only the keys change from deal to deal."""
    copies: dict[int, int] = {}
    present: dict[tuple[int, int], int] = {}
    for c in items:
        kind = kinds[c]
        copy = copies.get(kind, 0)
        copies[kind] = copy + 1
        present[(kind, copy)] = c
    wanted = dict(reference)
    tags, ids = [], []
    for kind in sorted(copies.keys() | wanted.keys()):
        for copy in range(max(copies.get(kind, 0), wanted.get(kind, 0))):
            tags.append(_splitmix(((kind & _LOW32) << 32) | copy))
            ids.append(present.get((kind, copy), -1))
    if len(tags) > _ID_MASK:
        raise ValueError(f"a keyed shuffle takes decks of fewer than {_ID_MASK + 1} cards")
    return tuple(tags), tuple(ids)


def _coupled_fill(items: list[int], tags: tuple[int, ...], ids: tuple[int, ...], salt: int) -> None:
    """`coupled_order`'s deal: the reference cards by key, top first, holes filled from below."""
    m = len(tags)
    view = _scratch(m)
    for i in range(m):
        t = tags[i]
        view[i] = (_mix(salt ^ t) & _KEY_MASK) | i
    _sort_keys(view, m)  # ascending: dealing order (the top card first) is from the end
    size = len(items)
    below = m - 1 - size
    for place in range(size):
        c = ids[view[m - 1 - place] & _ID_MASK]
        if c < 0:  # a hole: this deck's next card from below the deal
            c = ids[view[below] & _ID_MASK]
            while c < 0:
                below -= 1
                c = ids[view[below] & _ID_MASK]
            below -= 1
        items[size - 1 - place] = c


def tie_key(salt: int, action: int) -> int:
    """A heuristic bot's tie-break for `action` in a keyed game (fairness.md, "Coupled
    deals"): one salt a decision, whatever the number of legal actions, so two coupled games
    whose hands differ by one card keep drawing the same salts, and an action both offer
    gets the same key in both. A drawn float per legal action instead would shift the bot's
    stream by one for every card of difference, and uncouple every later tie. Keys of
    distinct actions are distinct (`_mix` is a bijection), uniform under a uniform salt:
    ties are still broken uniformly at random."""
    return _mix((salt ^ action) & _MASK)


class Rng:
    """SplitMix64: the whole generator state is `self.state`, a 64-bit integer."""

    __slots__ = ("state",)

    def __init__(self, seed: int = 0) -> None:
        self.state = mix_seed(seed)

    @classmethod
    def from_state(cls, state: int) -> Rng:
        rng = cls.__new__(cls)
        rng.state = state & _MASK
        return rng

    def next_u64(self) -> int:
        self.state = s = (self.state + _GAMMA) & _MASK
        return _mix(s)

    def below(self, n: int) -> int:
        """A number in [0, n): Lemire's multiply-shift, bias < n / 2**64."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        return (self.next_u64() * n) >> 64

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place: draws exactly what `below(i + 1)` for each i would."""
        self.state = _shuffle(items, self.state)

    def keyed_shuffle(self, items: list[int], tags: tuple[int, ...]) -> None:
        """A uniform shuffle of card ids coupled across decks (fairness.md, "Coupled
        deals"): one salt drawn, each card keyed by the salt and `tags[card]`, the cards
        ordered by key. Two decks that differ by some cards, shuffled from the same state,
        order their common cards alike, and both leave the generator in the same state."""
        self.state = _keyed_shuffle(items, tags, self.state)

    def coupled_shuffle(self, items: list[int], kinds: Sequence[int], reference: Mapping[int, int]) -> None:
        """A fresh deck's keyed deal coupled with `reference` (`coupled_order`): one draw."""
        coupled_order(items, kinds, reference, self.next_u64())

    def fork(self, salt: int) -> Rng:
        """An independent generator (e.g. for a bot) that does not disturb this one."""
        return Rng.from_state(mix_seed(self.state, salt))
