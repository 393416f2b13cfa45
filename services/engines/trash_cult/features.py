"""Trash Cult's features for the `policy` bot: the research environments' observation, fast.

The policy nets of this game are trained on `encode_view(state.view(seat))`, the hashed
view the PettingZoo environment observes (services/engines/observation.py). Building that
view (a dict of card names per zone and seat) and hashing each leaf's path was about 80% of
a policy decision's CPU. `observation` adds the same leaves to the same slots straight from
the state: every key is hashed once per process, a zone of cards is added by its kinds
from a table of slots, and the pending decision (small, and shaped by the rules) is the
rules' own `_pending_view` walked as the view walks it. So a weights file fits either way,
and tests/envs/test_view_features.py checks the two vectors are equal over many states,
and that re-dealing what the seat cannot see leaves them unchanged (only the seat's own
hand and public facts are read, as in `view`).

Keep it beside `TrashCultState.view`: a field added there is a leaf to add here (the
equality test fails until it is).
"""

from __future__ import annotations

from typing import Any

from ..observation import OBS_SIZE, name_slots, number, slot, walk
from .cards import CULTS, KIND_NAMES

SIZE = OBS_SIZE
_ZONES = ("members", "hostages", "shrine", "stash")


class _Seat:
    """The slots of one seat's entry `.seats[i]` of the view."""

    def __init__(self, i: int) -> None:
        base = f".seats[{i}]"
        self.cult = tuple(slot(f"{base}.cult={name}") for name in (*CULTS, ""))
        self.hand_size = f"{base}.hand_size"
        self.converted = slot(f"{base}.converted#")
        self.converted_yes = slot(f"{base}.converted[]=True")
        self.converted_no = slot(f"{base}.converted[]=False")
        self.zones = tuple((slot(f"{base}.{z}#"), name_slots(f"{base}.{z}", KIND_NAMES)) for z in _ZONES)


_SEATS: list[_Seat] = []
_TRASH = (slot(".trash#"), name_slots(".trash", KIND_NAMES))
_CHAOS = (slot(".chaos_discard#"), name_slots(".chaos_discard", KIND_NAMES))
_HAND = (slot(".hand#"), name_slots(".hand", KIND_NAMES))
_NO_PENDING = slot(".pending=None")


def _bag(
    idx: list[int], values: list[float], at: tuple[int, tuple[int, ...]], kinds: bytes, zone: list[int]
) -> None:
    """A bag of cards as the view hashes it: its size at `path#`, a one per card at its
    kind's `path[]=name`."""
    if zone:
        idx.append(at[0])
        values.append(float(len(zone)))
        slots = at[1]
        for c in zone:
            idx.append(slots[kinds[c]])
            values.append(1.0)


def observation(state: Any, seat: int) -> tuple[list[int], list[float]]:
    """The slots (< SIZE, a slot perhaps more than once) and values whose sums are
    `encode_view(state.view(seat))`, in no particular order."""
    st = state
    n = st.num_players
    while len(_SEATS) < n:
        _SEATS.append(_Seat(len(_SEATS)))
    kinds = st.config.kind_bytes
    idx: list[int] = []
    values: list[float] = []
    number(idx, values, ".seat", seat)
    number(idx, values, ".players", n)
    number(idx, values, ".turn", st.turn)
    number(idx, values, ".active", st.active)
    number(idx, values, ".actions_left", st.actions_left)
    number(idx, values, ".food_needed", st.config.food_needed(n))
    number(idx, values, ".deck_size", len(st.deck))
    _bag(idx, values, _TRASH, kinds, st.trash)
    number(idx, values, ".chaos_deck_size", len(st.chaos_deck))
    _bag(idx, values, _CHAOS, kinds, st.chaos_discard)
    _bag(idx, values, _HAND, kinds, st.hands[seat])
    cult, hands, tucked = st.cult, st.hands, st.tucked
    zones = (st.members, st.hostages, st.shrine, st.stash)
    for s in range(n):
        at = _SEATS[s]
        idx.append(at.cult[cult[s]])  # -1 (no cult yet) is the last entry, ""
        values.append(1.0)
        number(idx, values, at.hand_size, len(hands[s]))
        mine = tucked[s]
        if mine:
            idx.append(at.converted)
            values.append(float(len(mine)))
            for t in mine:
                idx.append(at.converted_yes if t >= 0 else at.converted_no)
                values.append(1.0)
        for z in range(4):
            _bag(idx, values, at.zones[z], kinds, zones[z][s])
    if st.pending is None:
        idx.append(_NO_PENDING)
        values.append(1.0)
    else:
        walk(idx, values, st._pending_view(seat), ".pending", "pending")
    number(idx, values, ".over", st.over)
    number(idx, values, ".winner", st.winner if st.winner >= 0 else None)
    return idx, values
