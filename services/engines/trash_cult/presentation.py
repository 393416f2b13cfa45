"""Trash Cult on the pages: its guide (card texts and colours, guide.py), the prompts of its
pending steps, the words its page template reads, and which moves any seat may be told of."""

from __future__ import annotations

from ..core.presentation import Presentation
from .guide import FOOD_OF, GUIDE

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
    guide=GUIDE,
    tie_rule="a full Shrine wins only at the end of its owner's own turn, with a Cult Member kept (TC-17)",
    decisions=PENDING,
    public_moves=PUBLIC_MOVES,
    answer_cards={"protection_spell": "Protection Spell", "hide": "Hide"},
    words={
        # Which food each cult worships (the rulebook's pairs), to show a Shrine's goal.
        "food": FOOD_OF,
        # What opened a Protection Spell window, in words (the engine's event names).
        "protect": {
            "plushie": "plays Opossum Plushie",
            "snackrifice": "Snackrifices",
            "poison": "plays Poison Their Punch",
        },
    },
)
