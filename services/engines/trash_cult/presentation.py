"""Trash Cult on the pages: card texts (the rulebook's, TC-11's chaos cards), colours, the
prompts of its pending steps, the words its page template reads, and which moves any seat
may be told of."""

from __future__ import annotations

from ..core.presentation import Presentation

_FAMILY = {
    **dict.fromkeys(("Raccoon", "Skunk", "Squirrel", "Rat"), "animal"),
    **dict.fromkeys(("Pizza", "Pie", "Cookie", "Donut"), "food"),
    **dict.fromkeys(("Pigeon Thief", "Poison Their Punch", "Opossum Plushie", "Convert Hostage"), "action"),
    **dict.fromkeys(("Protection Spell", "Hide"), "answer"),
}

CARD_TEXT = {
    "Raccoon": "Animal. Raccoons worship Pizza; their perk steals your food from an enemy's Stash.",
    "Skunk": "Animal. Skunks worship Pie; their perk steals your food from an enemy's Shrine.",
    "Squirrel": "Animal. Squirrels worship Cookies; their perk digs the deck for a card you need.",
    "Rat": "Animal. Rats worship Donuts; their perk summons your food from the trash pile.",
    "Pizza": "Food, worshipped by Raccoons: to your Shrine if yours, else to your Stash.",
    "Pie": "Food, worshipped by Skunks: to your Shrine if yours, else to your Stash.",
    "Cookie": "Food, worshipped by Squirrels: to your Shrine if yours, else to your Stash.",
    "Donut": "Food, worshipped by Rats: to your Shrine if yours, else to your Stash.",
    "Pigeon Thief": "Blindly snatch a card from an enemy's hand; you may play it at once as a free action.",
    "Poison Their Punch": "An enemy loses all their Cult Members (natural and converted); Hostages stay.",
    "Opossum Plushie": "Use any Snackrifice perk without paying for it and without chaos.",
    "Convert Hostage": "Turn one of your Hostages into a Cult Member.",
    "Protection Spell": "Answer a Poison Their Punch or a Snackrifice: the poison or the perk has no effect.",
    "Hide": "Answer a chaos card: you do not take part in it.",
    "Hungry Bear": "Chaos: every player trashes 2 animals or 1 food.",
    "Rat Poison": "Chaos: every player trashes 1 animal or 2 food.",
    "Animal Control": "Chaos: every player trashes all their Hostages.",
    "Trashnado": "Chaos: every player trashes all food in their Stash.",
    "Garbage Trucks Broke Down": "Chaos: every player draws 2 cards.",
    "Lunar Eclipse": "Chaos: converted Cult Members turn back into Hostages.",
    "Trash Swap": "Chaos: every hand passes to the player on the left.",
    "Thunderstorm": "Chaos: every player trashes 1 food from their Shrine.",
}

PENDING = {
    "cult": "Pick a cult",
    "protect": "Answer with a Protection Spell?",
    "perk": "Use the perk",
    "chaos": "Chaos card",
    "steal": "Pigeon Thief: keep the stolen card or play it",
}

PUBLIC_MOVES = frozenset(
    {
        "add",
        "snackrifice_member",
        "snackrifice_hostages",
        "snackrifice_food",
        "convert_hostage",
        "opossum_plushie",
        "pigeon_thief",
        "poison_their_punch",
        "discard",
        "pass",
        "pick_cult",
        "protection_spell",
        "no_protection",
        "perk_target",
        "hide",
        "resolve",
        "lose_animals",
        "lose_food",
        "trash_member",
        "trash_hostage",
        "trash_food",
    }
)

PRESENTATION = Presentation(
    card_text=CARD_TEXT,
    card_family=lambda name: _FAMILY.get(name, "chaos"),
    decisions=PENDING,
    public_moves=PUBLIC_MOVES,
    answer_cards={"protection_spell": "Protection Spell", "hide": "Hide"},
    words={
        # Which food each cult worships (the rulebook's pairs), to show a Shrine's goal.
        "food": {"Raccoon": "Pizza", "Skunk": "Pie", "Squirrel": "Cookie", "Rat": "Donut"},
        # What opened a Protection Spell window, in words (the engine's event names).
        "protect": {
            "plushie": "plays Opossum Plushie",
            "snackrifice": "Snackrifices",
            "poison": "plays Poison Their Punch",
        },
    },
)
