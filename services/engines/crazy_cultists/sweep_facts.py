"""Crazy Cultists' facts for the sweeps' breakdowns (services/balance/sweeps/facts.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.facts import played
from ..core.game import State
from .cards import NAMES, kind_table


def facts(state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]) -> dict[str, Any]:
    """Cards each seat played, named by the game's own action detail.

    A "play" names its card; answering with a Counter-Spell is its own action kind with no
    card field, so it is labelled by hand. Draws, takes, discards and passes are not plays.
    The view has no per-seat grouping beyond the seat itself, so there are no groups.
    """

    def card(detail: dict[str, Any]) -> str | None:
        kind = detail.get("kind")
        if kind == "play" and detail.get("card"):
            return str(detail["card"])
        if kind == "counter":
            return "counter_spell"
        return None

    return {"groups": {}, "played": played(state, actions, card)}


def card_labels(config: Any) -> list[str]:
    """Each card id's label under `config` (the card reports' catalogue, balance/sweeps/cards.py)."""
    return [NAMES[k] for k in kind_table(config)[0]]


CARD_COUNT_FIELDS: dict[str, str] = {n: n for n in NAMES}  # label -> the config field of its count
