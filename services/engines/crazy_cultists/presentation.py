"""Crazy Cultists on the pages: its guide (card texts, printed titles and colours, guide.py),
the prompts of its pending decisions, its variants in words and which moves any seat may
be told of."""

from __future__ import annotations

from ..core.presentation import Presentation
from .guide import GUIDE

PENDING = {
    "voodoo": "Voodoo: discard more cards, or stop",
    "counter": "Counter-Spell window",
    "toil": "Toiling Trouble: pick a pair from the stack",
    "evil_eye": "Evil Eye: take a card from the hand shown to you, or none",
    "nerd_keep": "Nerdronomicon: keep one card",
    "nerd_top": "Nerdronomicon: put one card on top of the deck",
    "ouija": "Ouija: swap, discard or leave the hand shown",
    "hail": "Hail Yourself: take a card from a hand",
    "necro": "Necromancy: take a card from the discard",
    "scry": "Scrying Bones: take a card from the deck",
    "alchemy": "Forbidden Alchemy: return a card",
    "dark_draw": "Dark Powers draw: take a Dark card or draw from the main deck",
}

# Not listed: a card chosen from a hand shown to one seat, kept from the deck's top, taken
# from a searched deck or from a revealed hand (`choose`, `take`).
PUBLIC_MOVES = frozenset(
    {
        "play",
        "pass",
        "counter",
        "done",
        "take_dark",
        "draw_main",
        "swap_hands",
        "discard_hand",
        "leave_hand",
        "pair",
        "discard",
    }
)


PRESENTATION = Presentation(
    guide=GUIDE,
    decisions=PENDING,
    public_moves=PUBLIC_MOVES,
    answer_cards={"counter": "counter_spell"},
    config_words={
        "variant": "Rules variant",
        "dark_powers": "Dark Powers expansion",
        "optional_setup": "Dark Powers' smaller main deck",
        "base": "standard: 5 candles, 10 favor each",
        "devilish": "devilish: a candle resets every stack",
        "fiendish": "fiendish: exactly 10 favor, or lose the stack",
        "beast": "beast: 6 favor a candle, 3 candles win (short)",
    },
)
