"""Trash Cult's config: every number of the rulings is a field, so a sweep can change it.

The annotations are real types, not strings (no `from __future__ import annotations`):
every state restore rebuilds the config through `typing.get_type_hints`, and string
annotations would cost a compile per field each time.
"""

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from ..core.errors import BadConfig
from .cards import ACTIVE_KINDS, COUNT_FIELDS, CULT_BY_NAME, CULTS, EITHER_OR, kind_table

MAX_COUNT = 40  # per kind and for hand sizes: a sanity bound for sweeps
# TC-11's amounts: 0 is allowed (a chaos card that takes or gives nothing).
CHAOS_AMOUNTS = (
    "hungry_bear_animals",
    "hungry_bear_food",
    "rat_poison_animals",
    "rat_poison_food",
    "garbage_trucks_draw",
    "thunderstorm_food",
)


@dataclass(frozen=True)
class TrashCultConfig:
    # TC-2: each seat's cult by name, e.g. ("Rat", "Raccoon"); empty = the pick phase.
    cults: tuple[str, ...] = ()
    # TC-3: food of your cult needed in your Shrine to win, by player count.
    food_needed_2p: int = 6
    food_needed_3p: int = 5
    food_needed_4p: int = 4
    # TC-4 / setup: draw up to this many at the start of a turn; deal this many.
    hand_size: int = 6
    deal: int = 5
    # TC-5: actions per turn.
    actions_per_turn: int = 2
    # G-5: turns begun before the game ends as a draw.
    max_turns: int = 500
    # TC-1: the active deck.
    raccoons: int = 7
    skunks: int = 7
    squirrels: int = 7
    rats: int = 7
    pizzas: int = 10
    pies: int = 10
    cookies: int = 10
    donuts: int = 10
    pigeon_thieves: int = 6
    poison_their_punches: int = 4
    opossum_plushies: int = 2
    convert_hostages: int = 9
    protection_spells: int = 3
    hides: int = 4
    # TC-1: the chaos deck.
    hungry_bears: int = 2
    rat_poisons: int = 2
    animal_controls: int = 2
    trashnados: int = 2
    garbage_trucks_broke_down: int = 2
    lunar_eclipses: int = 2
    trash_swaps: int = 2
    thunderstorms: int = 2
    # TC-7: a Snackrifice costs one Cult Member, or this many like Hostages / like food.
    snackrifice_hostage_cost: int = 2
    snackrifice_food_cost: int = 2
    # TC-11: what the chaos cards take or give. Hungry Bear and Rat Poison are either/or:
    # animals to trash or food to trash.
    hungry_bear_animals: int = 2
    hungry_bear_food: int = 1
    rat_poison_animals: int = 1
    rat_poison_food: int = 2
    garbage_trucks_draw: int = 2
    thunderstorm_food: int = 1  # trashed from your Shrine

    # The least value each field takes where its rules need more than 0 (validate below).
    LEAST: ClassVar[dict[str, int]] = {
        **dict.fromkeys(("food_needed_2p", "food_needed_3p", "food_needed_4p", "actions_per_turn"), 1),
        **dict.fromkeys(("max_turns", "snackrifice_hostage_cost", "snackrifice_food_cost"), 1),
    }

    def validate(self) -> None:
        unknown = [c for c in self.cults if c not in CULT_BY_NAME]
        if unknown:
            raise BadConfig(f"unknown cult(s) {unknown}; cults are {', '.join(CULTS)}")
        if len(set(self.cults)) != len(self.cults):
            raise BadConfig(f"no two seats may lead the same cult (TC-2), got {list(self.cults)}")
        if len(self.cults) == 1:
            raise BadConfig("cults must name one cult per seat, or none for the pick phase")
        for name in ("food_needed_2p", "food_needed_3p", "food_needed_4p", "actions_per_turn", "max_turns"):
            if getattr(self, name) < 1:
                raise BadConfig(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 <= self.deal <= MAX_COUNT or not 0 <= self.hand_size <= MAX_COUNT:
            raise BadConfig(f"hand_size and deal must be within 0..{MAX_COUNT}")
        for name in COUNT_FIELDS + CHAOS_AMOUNTS:
            if not 0 <= getattr(self, name) <= MAX_COUNT:
                raise BadConfig(f"{name} must be within 0..{MAX_COUNT}, got {getattr(self, name)}")
        for name in ("snackrifice_hostage_cost", "snackrifice_food_cost"):
            # A Snackrifice that costs nothing would be a free perk every action (TC-7).
            if not 1 <= getattr(self, name) <= MAX_COUNT:
                raise BadConfig(f"{name} must be within 1..{MAX_COUNT}, got {getattr(self, name)}")

    def either_or(self, kind: int) -> tuple[int, int]:
        """TC-11: (animals, food) an either/or chaos card of `kind` asks for."""
        animals, food = EITHER_OR[kind]
        return getattr(self, animals), getattr(self, food)

    def food_needed(self, players: int) -> int:
        """TC-3."""
        return (self.food_needed_2p, self.food_needed_3p, self.food_needed_4p)[players - 2]

    @cached_property
    def kinds(self) -> tuple[int, ...]:
        """Card id -> kind, computed once per config (states share their config object)."""
        return kind_table(tuple(getattr(self, name) for name in COUNT_FIELDS))

    @cached_property
    def kind_bytes(self) -> bytes:
        """`kinds` as bytes (every kind is below 256): the same `kinds[c]`, read by the
        compiled rules straight from the buffer instead of converting a tuple's int."""
        return bytes(self.kinds)

    @cached_property
    def active_cards(self) -> int:
        """Ids below this are active-deck cards; the rest are chaos cards (cards.py)."""
        return sum(getattr(self, name) for name in COUNT_FIELDS[:ACTIVE_KINDS])
