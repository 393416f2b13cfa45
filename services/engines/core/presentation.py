"""How a game reads on the pages: its cards' words and titles, its decisions' prompts, and
which of its moves any seat may be told of. Each game holds its own (its package's
`presentation.py`, given to its GameSpec); the gateway renders what it finds here and
names no game (services/gateway/pages/present.py, pages/history.py).

Only words and colours: what a card does is the rules' business. A game without one gets
`PLAIN`: cards by their ids, prompts by their decision names, every move described as
"<seat> decided" (nothing it cannot vouch for as public).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


def _titled(name: str) -> str:
    """`hex_o_rama` -> `Hex O Rama`; a name that already reads well stays."""
    if "_" in name or name.islower():
        return " ".join(part.capitalize() for part in name.split("_"))
    return name


@dataclass(frozen=True)
class Presentation:
    # What each card does, in the rulebook's words, by the name a view gives it (hover, tap).
    card_text: Mapping[str, str] = field(default_factory=dict)
    # A card's printed title, where its name would read differently ("Hex-O-Rama").
    card_titles: Mapping[str, str] = field(default_factory=dict)
    # The CSS family of a card by name (its colour only); None: every card "plain".
    card_family: Callable[[str], str] | None = None
    # A pending decision's (or phase's) name -> the prompt the page shows for it.
    decisions: Mapping[str, str] = field(default_factory=dict)
    # Action kinds (`detail.kind`) whose label names only what every seat sees happen: a
    # past move of any other kind is described as "<seat> decided" (rulings G-3).
    public_moves: frozenset[str] = frozenset()
    # Answers whose action names no card though one card answers (it leaves the hand):
    # action kind -> the card's name, so the page can point at the card.
    answer_cards: Mapping[str, str] = field(default_factory=dict)
    # A config field's or choice's name -> words for the lobby's forms ("Dark Powers expansion").
    config_words: Mapping[str, str] = field(default_factory=dict)
    # The view's field naming the seat whose turn it is (the one the panel calls "Your move").
    active_field: str = "active"
    # Anything else the game's own page template reads (`words` there), by name.
    words: Mapping[str, Any] = field(default_factory=dict)
    # A game with tricks: (view, public log) -> its last completed trick ({winner, top,
    # cards}) while the next is not yet led, for the table page; None for other games.
    last_trick: Callable[[Mapping[str, Any], list[dict[str, Any]]], dict[str, Any] | None] | None = None
    # Card text for a card given as an object (a view's {name, suit, value}), where the
    # text depends on more than its name; None: look the name up in `card_text`.
    card_text_of: Callable[[Mapping[str, Any]], str] | None = None

    def title(self, name: str) -> str:
        return self.card_titles.get(name) or _titled(name)

    def family(self, name: str) -> str:
        return self.card_family(name) if self.card_family is not None else "plain"

    def text(self, card: Any) -> str:
        if isinstance(card, Mapping):
            return self.card_text_of(card) if self.card_text_of is not None else ""
        return self.card_text.get(str(card), "")


PLAIN = Presentation()
