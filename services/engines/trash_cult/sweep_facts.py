"""Trash Cult's facts for the sweeps' breakdowns (services/balance/sweeps/facts.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.facts import played
from ..core.game import State
from .cards import ACTIVE_KINDS, COUNT_FIELDS, KIND_NAMES

# Trash Cult: action kinds that are playing a card from hand (TC-6, TC-10..TC-15), by card.
_TRASH_CULT_CARDS = {
    "pigeon_thief": "Pigeon Thief",
    "poison_their_punch": "Poison Their Punch",
    "opossum_plushie": "Opossum Plushie",
    "convert_hostage": "Convert Hostage",
    "protection_spell": "Protection Spell",
    "hide": "Hide",
}


def _trash_cult_play(detail: dict[str, Any]) -> str | None:
    kind = detail.get("kind")
    if kind == "add":
        return str(detail.get("card"))
    return _TRASH_CULT_CARDS.get(str(kind))


def facts(state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]) -> dict[str, Any]:
    """Cult of each seat (from the public view) and which card kinds each seat played.

    The action-detail `card` of an "add" names the animal or food kind put in play; it is
    a public play, so counting it leaks nothing. A seat whose cult is still unpicked (a
    game capped during the pick phase) is labelled "none".
    """
    view = state.view(None)
    cults = [seat.get("cult") or "none" for seat in view.get("seats", [])]
    out: dict[str, Any] = {"groups": {}, "played": played(state, actions, _trash_cult_play)}
    if len(cults) == state.num_players:
        out["groups"]["cult"] = cults
    return out


def card_labels(config: Any) -> list[str]:
    """Each card id's label under `config` (the card reports' catalogue, balance/sweeps/cards.py)."""
    return [KIND_NAMES[k] for k in config.kinds]


CARD_COUNT_FIELDS: dict[str, str] = {
    KIND_NAMES[k]: COUNT_FIELDS[k] for k in range(ACTIVE_KINDS)
}  # label -> the config field of its count
