"""How a game reads on the pages: its cards' words, titles and colours, its decisions'
prompts, which of its moves any seat may be told of, and its guide for players. Each game
holds its own (its package's `presentation.py`, given to its GameSpec); the gateway renders
what it finds here and names no game (services/gateway/pages/present.py, pages/history.py,
pages/learn.py).

A card's words have one source: the game's `Guide` (its `guide.py`, the rulebook's words;
core/guide.py). The table's hover text, a card's printed title and its colour family are
read from the guide's face for that card, so the table, the How-to-play page and the card
pictures cannot disagree.

Only words and colours: what a card does is the rules' business. A game without one gets
`PLAIN`: cards by their ids, prompts by their decision names, every move described as
"<seat> decided" (nothing it cannot vouch for as public), and no How-to-play page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .guide import Face, Guide


def _titled(name: str) -> str:
    """`hex_o_rama` -> `Hex O Rama`; a name that already reads well stays."""
    if "_" in name or name.islower():
        return " ".join(part.capitalize() for part in name.split("_"))
    return name


@dataclass(frozen=True)
class Presentation:
    # The game told to its players (How to play, card faces, tips, the guided first turn):
    # also the one source of each card's text, printed title and colour family.
    guide: Guide | None = None
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
    # The hover text of a card a view gives as an object (a view's {name, suit, value}),
    # where it says more than the face's text (its worth); None: the face's text.
    card_text_of: Callable[[Mapping[str, Any]], str] | None = None
    # What wins when final scores tie (the end screen's reason when a loser scored as much
    # as a winner), as a clause: "a full Shrine wins only ..."; "" where no tie is possible.
    tie_rule: str = ""

    def face(self, card: Any) -> Face | None:
        """The guide's face of a card as a view carries it (a name or an object)."""
        return self.guide.face(card) if self.guide is not None else None

    def title(self, name: str) -> str:
        found = self.face(name)
        return found.title if found is not None else _titled(name)

    def family(self, name: str) -> str:
        found = self.face(name)
        return found.family if found is not None else "plain"

    def text(self, card: Any) -> str:
        if isinstance(card, Mapping) and self.card_text_of is not None:
            return self.card_text_of(card)
        found = self.face(card)
        return found.text if found is not None else ""


PLAIN = Presentation()
