"""Trash Cult's cards: kinds, cults, and the id -> kind table the config's counts describe.

A card is an integer id; `kind_table` maps each id to one of the small integer kinds below.
Active-deck cards take the ids 0..A-1 and chaos cards A..A+C-1, so "is this a chaos card"
is one comparison and the 112 default cards are each in exactly one zone (TC-1).

Kinds are ordered so that arithmetic does the bookkeeping: the animal of cult c is kind c,
the food it worships is kind FOOD + c (TC-2), and every perk is named by the cult it
belongs to (TC-7: the perk is that of the animal or food paid).
"""

from __future__ import annotations

from functools import cache

from ..core.decks import build_deck

# Cults, in the order of their animal and food kinds (TC-2).
CULTS = ("Raccoon", "Skunk", "Squirrel", "Rat")
RACCOON, SKUNK, SQUIRREL, RAT = range(4)

# Active-deck kinds.
ANIMALS = range(0, 4)  # Raccoon, Skunk, Squirrel, Rat: kind == cult
FOOD = 4  # Pizza, Pie, Cookie, Donut: kind == FOOD + cult
PIGEON_THIEF = 8
POISON_THEIR_PUNCH = 9
OPOSSUM_PLUSHIE = 10
CONVERT_HOSTAGE = 11
PROTECTION_SPELL = 12
HIDE = 13
# Chaos kinds (TC-11).
HUNGRY_BEAR = 14
RAT_POISON = 15
ANIMAL_CONTROL = 16
TRASHNADO = 17
GARBAGE_TRUCKS = 18
LUNAR_ECLIPSE = 19
TRASH_SWAP = 20
THUNDERSTORM = 21

KIND_NAMES = (
    "Raccoon",
    "Skunk",
    "Squirrel",
    "Rat",
    "Pizza",
    "Pie",
    "Cookie",
    "Donut",
    "Pigeon Thief",
    "Poison Their Punch",
    "Opossum Plushie",
    "Convert Hostage",
    "Protection Spell",
    "Hide",
    "Hungry Bear",
    "Rat Poison",
    "Animal Control",
    "Trashnado",
    "Garbage Trucks Broke Down",
    "Lunar Eclipse",
    "Trash Swap",
    "Thunderstorm",
)
ACTIVE_KINDS = 14  # kinds 0..13 live in the active deck, 14..21 in the chaos deck
KIND_BY_NAME = {name: k for k, name in enumerate(KIND_NAMES)}
CULT_BY_NAME = {name: c for c, name in enumerate(CULTS)}

# The perk each cult's Snackrifice gives (TC-8), for labels and logs.
PERKS = (
    "take your food from an opponent's Stash",
    "take a card from an opponent's Shrine",
    "search the active deck for a card",
    "take your food from the trash pile",
)

# Either/or chaos cards (TC-11): the config fields holding (animals to trash, food to trash)
# for the two options; the numbers are config defaults (2/1 and 1/2), so a sweep can vary them.
EITHER_OR = {
    HUNGRY_BEAR: ("hungry_bear_animals", "hungry_bear_food"),
    RAT_POISON: ("rat_poison_animals", "rat_poison_food"),
}

# Config field that holds each kind's count (TC-1), in kind order.
COUNT_FIELDS = (
    "raccoons",
    "skunks",
    "squirrels",
    "rats",
    "pizzas",
    "pies",
    "cookies",
    "donuts",
    "pigeon_thieves",
    "poison_their_punches",
    "opossum_plushies",
    "convert_hostages",
    "protection_spells",
    "hides",
    "hungry_bears",
    "rat_poisons",
    "animal_controls",
    "trashnados",
    "garbage_trucks_broke_down",
    "lunar_eclipses",
    "trash_swaps",
    "thunderstorms",
)


@cache
def kind_table(counts: tuple[int, ...]) -> tuple[int, ...]:
    """Card id -> kind for a deck with `counts[kind]` cards of each kind (in kind order);
    cached, because every restored state builds a new (equal) config."""
    return tuple(build_deck(list(enumerate(counts))))
