"""Crazy Cultists's features for the `policy` bot: the research environments' observation, fast.

The policy nets of this game are trained on `encode_view(state.view(seat))`, the hashed
view the PettingZoo environment observes (services/engines/observation.py). Building that
view (card names per stack, Spire and hand, counts per discard pile) and hashing each
leaf's path was about 80% of a policy decision's CPU. `observation` adds the same leaves
to the same slots straight from the state: every key is hashed once per process, a zone
of cards is added by its kinds from a table of slots, and the pending decision (small,
and shaped by the rules: who is shown which hand) is the rules' own `_pending_view`
walked as the view walks it. So a weights file fits either way, and
tests/envs/test_view_features.py checks the two vectors are equal over many states, and
that re-dealing what the seat cannot see leaves them unchanged (only the seat's own hand
and public facts are read, as in `view`).

Keep it beside `CrazyCultistsState.view`: a field added there is a leaf to add here (the
equality test fails until it is).
"""

from __future__ import annotations

from typing import Any

from ..observation import OBS_SIZE, name_slots, number, slot, walk
from .cards import NAMES, VALUE

SIZE = OBS_SIZE
# A seat's leaves that are numbers (or a flag as the rules keep it), in `paths` order.
_NUMBERS = ("seat", "hand_size", "stack_total", "need", "candles", "spire_total", "baptized", "dark_due")


class _Seat:
    """The paths and slots of one seat's entry `.players[i]` of the view."""

    def __init__(self, i: int) -> None:
        base = f".players[{i}]"
        self.paths = tuple(f"{base}.{k}" for k in _NUMBERS)
        self.polymorphed = (slot(f"{base}.polymorphed=False"), slot(f"{base}.polymorphed=True"))
        self.spired = (slot(f"{base}.spired=False"), slot(f"{base}.spired=True"))
        self.stack = (slot(f"{base}.stack#"), name_slots(f"{base}.stack", NAMES))
        self.spire = (slot(f"{base}.spire#"), name_slots(f"{base}.spire", NAMES))


_SEATS: list[_Seat] = []
_HAND = (slot(".hand#"), name_slots(".hand", NAMES))
# A discard pile is a dict of counts by name: `.discard.<name>` adds the count and a one
# at `.discard.<name>=<count>`.
_DISCARD = tuple(f".discard.{name}" for name in NAMES)
_DARK_DISCARD = tuple(f".dark_discard.{name}" for name in NAMES)
_NO_PENDING = slot(".pending=None")
_NO_TOP = slot(".discard_top=")
_TOP = tuple(slot(f".discard_top={name}") for name in NAMES)


def _bag(
    idx: list[int], values: list[float], at: tuple[int, tuple[int, ...]], kinds: tuple, zone: list[int]
) -> int:
    """A bag of cards as the view hashes it (its size at `path#`, a one per card at its
    kind's `path[]=name`); returns the cards' favor points, the view's totals."""
    total = 0
    if zone:
        idx.append(at[0])
        values.append(float(len(zone)))
        slots = at[1]
        for c in zone:
            k = kinds[c]
            idx.append(slots[k])
            values.append(1.0)
            total += VALUE[k]
    return total


def _counts(
    idx: list[int], values: list[float], paths: tuple[str, ...], kinds: tuple, zone: list[int]
) -> None:
    if not zone:
        return
    counts = [0] * len(NAMES)
    for c in zone:
        counts[kinds[c]] += 1
    for k in range(len(NAMES)):
        if counts[k]:
            number(idx, values, paths[k], counts[k])


def observation(state: Any, seat: int) -> tuple[list[int], list[float]]:
    """The slots (< SIZE, a slot perhaps more than once) and values whose sums are
    `encode_view(state.view(seat))`, in no particular order."""
    st = state
    n = st.num_players
    while len(_SEATS) < n:
        _SEATS.append(_Seat(len(_SEATS)))
    kinds = st.kind
    idx: list[int] = []
    values: list[float] = []
    number(idx, values, ".seat", seat)
    number(idx, values, ".active", st.active)
    number(idx, values, ".turn", st.turn)
    _bag(idx, values, _HAND, kinds, st.hands[seat])
    hands, stacks, spires, candles = st.hands, st.stacks, st.spire, st.candles
    poly, baptized, dark_due = st.poly, st.baptized, st.dark_due
    for s in range(n):
        at = _SEATS[s]
        spire = spires[s]
        p = at.paths
        number(idx, values, p[0], s)
        number(idx, values, p[1], len(hands[s]))
        number(idx, values, p[2], _bag(idx, values, at.stack, kinds, stacks[s]))
        number(idx, values, p[3], st.need(s))
        number(idx, values, p[4], candles[s])
        idx.append(at.polymorphed[poly[s] >= 0])
        idx.append(at.spired[1 if spire else 0])
        values.append(1.0)
        values.append(1.0)
        top = VALUE[kinds[spire[0]]] if spire else 0  # the Spire itself: in the total, not the list
        number(idx, values, p[5], top + _bag(idx, values, at.spire, kinds, spire[1:]))
        number(idx, values, p[6], baptized[s])
        number(idx, values, p[7], dark_due[s])
    number(idx, values, ".deck_size", len(st.deck))
    discard = st.discard
    _counts(idx, values, _DISCARD, kinds, discard)
    idx.append(_TOP[kinds[discard[-1]]] if discard else _NO_TOP)
    values.append(1.0)
    number(idx, values, ".dark_deck_size", len(st.dark_deck))
    _counts(idx, values, _DARK_DISCARD, kinds, st.dark_discard)
    if st.pending is None:
        idx.append(_NO_PENDING)
        values.append(1.0)
    else:
        walk(idx, values, st._pending_view(seat), ".pending", "pending")
    number(idx, values, ".candles_to_win", st.candles_to_win())
    number(idx, values, ".variant", st.config.variant)
    number(idx, values, ".winner", st.winner)
    number(idx, values, ".over", st.over)
    return idx, values
