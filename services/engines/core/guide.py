"""A game told to its players: the How-to-play page, the card faces and the table's tips.

Each game's `guide.py` fills one `Guide` from its rulebook (in `/work/shared/seeds/`) and
the rulings, and its `presentation.py` carries it (`Presentation(guide=GUIDE)`, behind the
GameSpec): the guide's faces are the one source of each card's text, title and colour
family on every page. The words live beside the rules because they are per-game facts: the
gateway renders a Guide the same way for every game and holds no table of its own (the
layering rule). Nothing here decides legality; a Guide only explains.

A Guide is plain data plus two small functions of a view (the JSON a seat's `View` gives):
`face_of` finds the face of any card a view carries, `coach` says what the seat should do
now and why (the guided first turn). Both read views, never states, so they see only what
that seat may see (rulings G-3).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Colours:
    """One family's colours on a card face: paper, frame, ink and the title band."""

    fill: str
    edge: str
    ink: str
    band: str
    band_ink: str = "#ffffff"


@dataclass(frozen=True)
class Face:
    """What a card shows: its printed name, type line, corner value or suit, and effect."""

    key: str  # the engine's own name for the card, as views carry it ("hex_o_rama", "Pizza")
    title: str  # as printed ("Hex-O-Rama")
    kind: str  # the type line ("Hijinx", "Food", "Blue suit")
    family: str  # which `Guide.scheme` entry colours it
    text: str  # what the card does, in the rulebook's words
    value: str = ""  # the corner: a favor value, a Tricky Cultists card's points; "" for none
    count: str = ""  # how many the deck holds, for the How-to-play page ("15", "1 (Dark Powers)")
    glyph: str = ""  # a short mark drawn large in the middle of the face ("4", "Rc")


@dataclass(frozen=True)
class Option:
    """An optional rule or variant: its name, what it changes, and whether a table's whole
    config (defaults plus the table's overrides) has it in force."""

    name: str
    text: str
    applies: Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class Section:
    heading: str
    points: tuple[str, ...]


@dataclass(frozen=True, eq=False)  # one object per game: hashed by identity (faces are cached by it)
class Guide:
    game: str
    title: str
    players: str  # "3-6 players"
    goal: str
    setup: tuple[str, ...]
    turn: tuple[str, ...]
    faces: tuple[Face, ...]  # every card of the game, in the rulebook's order
    scheme: Mapping[str, Colours]  # colours by family; "back" colours the card backs
    options: tuple[Option, ...] = ()
    sections: tuple[Section, ...] = ()  # more rules a player needs (scoring, chaos, answers)
    # Things on the table that are not cards but need explaining: counters, zones, cults,
    # agendas. Keyed by the name the board shows ("stack", "candles", "Raccoon", ...).
    tips: Mapping[str, str] = field(default_factory=dict)
    # The guided first turn: (what to do now, why) for this seat's decision, or None.
    coach: Callable[[Mapping[str, Any], int], tuple[str, str] | None] | None = None
    back_mark: str = "?"  # the letters on a card back
    # Faces that views carry as objects (Tricky Cultists' cards), made from the object.
    face_of_object: Callable[[Mapping[str, Any]], Face] | None = None

    def face(self, card: Any) -> Face | None:
        """The face of a card as a view carries it (a name, or an object with a suit)."""
        if isinstance(card, Mapping):
            return self.face_of_object(card) if self.face_of_object else None
        return self._faces().get(str(card))

    def _faces(self) -> dict[str, Face]:
        found = self.__dict__.get("_by_key")
        if found is None:
            found = {f.key: f for f in self.faces}
            object.__setattr__(self, "_by_key", found)
        return found

    def colours(self, family: str) -> Colours:
        return self.scheme.get(family) or self.scheme["plain"]

    def in_force(self, config: Mapping[str, Any]) -> list[Option]:
        """The optional rules a table plays with."""
        return [o for o in self.options if o.applies(config)]

    def advice(self, view: Mapping[str, Any], seat: int) -> tuple[str, str] | None:
        """What `seat` should do now and why, from what it can see; None off its turn."""
        if self.coach is None or seat < 0:
            return None
        return self.coach(view, seat)
