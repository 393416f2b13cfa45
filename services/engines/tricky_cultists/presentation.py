"""Tricky Cultists on the pages: its guide (suit abilities, TK-7, and colours, guide.py), a
cult card's hover text (its worth, then its face's ability), the prompts of its phases, its
last trick, and which moves any seat may be told of."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core.presentation import Presentation
from .guide import GUIDE

PHASES = {
    "draft": "Draft an agenda",
    "bonus": "Choose the Round Bonus suit",
    "play": "Play a card to the trick",
    "red": "Red ability: set trump",
    "green": "Green ability: take a Codex card",
    "blue": "Blue ability: swap a hand card with a Codex card",
    "purple": "Purple ability: give a Suspicion",
    "steal": "Win No Tricks: steal a trick",
    "over": "The game is over",
}

# Not listed: an agenda kept, a Codex card taken or swapped (only its taker sees which).
PUBLIC_MOVES = frozenset({"play", "decline", "bonus", "trump", "give", "steal", "pass"})


def card_text_of(card: Mapping[str, Any]) -> str:
    """A card of a view ({name, suit, value}): its worth, then its face's text (the suit's
    ability, from the guide)."""
    value = card.get("value", 0)
    worth = f"worth {value} point{'' if value == 1 else 's'}"
    face = GUIDE.face(card)
    return f"{card.get('name')}, {worth}. {face.text if face is not None else ''}".strip()


_TRICK = re.compile(r"wins the trick with (?P<top>[^(]+?) \((?P<cards>[^)]*)\)")


def last_trick(view: Mapping[str, Any], log: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last completed trick, kept in view until the next lead: its winner and its cards
    in playing order, read from the newest `trick` event of `log` (the public log) and
    matched to the round's played cards in `view` (so each card keeps its id, suit and
    value). None while a trick is being played, or when that trick is from an earlier round
    (its cards are no longer among this round's played ones)."""
    if view.get("trick") or not view.get("played"):
        return None
    entry = next((e for e in reversed(log) if e.get("kind") == "trick"), None)
    found = _TRICK.search(entry["text"]) if entry else None
    if found is None or entry is None:
        return None
    by_name = {c["name"]: c for c in view["played"]}
    names = [n.strip() for n in found["cards"].split(",")]
    if not all(n in by_name for n in names):
        return None
    return {"winner": entry["seat"], "top": found["top"].strip(), "cards": [by_name[n] for n in names]}


PRESENTATION = Presentation(
    guide=GUIDE,
    decisions=PHASES,
    public_moves=PUBLIC_MOVES,
    card_text_of=card_text_of,
    last_trick=last_trick,
    active_field="actor",
)
