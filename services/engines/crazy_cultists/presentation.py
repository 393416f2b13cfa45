"""Crazy Cultists on the pages: card texts (the rulebook's), printed titles, colours, the
prompts of its pending decisions and which moves any seat may be told of."""

from __future__ import annotations

from ..core.presentation import Presentation
from .cards import NAMES, TITLES

# The Dark Powers expansion's cards (CC-10) look different from the main deck.
_DARK = frozenset(NAMES[NAMES.index("dark_favor_4") :])

CARD_TEXT = {
    "favor_1": "Favor card worth 1: add it to your Favor Stack.",
    "favor_2": "Favor card worth 2: add it to your Favor Stack.",
    "favor_3": "Favor card worth 3: add it to your Favor Stack.",
    "favor_4": "Favor card worth 4: add it to your Favor Stack.",
    "fall_from_grace": "Discard the most recent card played in your Favor Stack.",
    "polymorphization": "Skip your next turn.",
    "infernal_inferno": "Discard the 2 most recent cards played in your Favor Stack.",
    "toiling_trouble": "Discard 2 cards of the same value from your Favor Stack.",
    "hex_o_rama": "Discard the 3 most recent cards played in your Favor Stack.",
    "evil_eye": "Show your hand to the player that dealt you this card; they may take a card from it.",
    "beelze_beatdown": "Discard your entire Favor Stack.",
    "nerdronomicon": "Look at the top 3 cards of the deck, keep 1, put the other 2 back on top in any order.",
    "counter_spell": "Negate the effects of a single Hijinx card. Can be played at any time.",
    "switcheroo": "Trade the last card in your Favor Stack with that of the player that dealt you this card.",
    "dark_favor_4": "Dark Powers: 4 Favor Points for your Favor Stack.",
    "life_siphon": "Dark Powers: take the last card of another player's Favor Stack onto your own.",
    "black_spire": "Dark Powers: the target must stack 3+ Favor Points on this card before their own stack.",
    "necromancy": "Dark Powers: take any 1 card from the main discard pile into your hand.",
    "dark_baptism": "Dark Powers: no Hijinx may target you for a round; take another turn at once.",
    "ouija": "Dark Powers: see a player's hand; swap hands with them or make them discard it.",
    "fear_the_reaper": "Dark Powers: every other player discards their hand.",
    "puppet_master": "Dark Powers: every player gives their hand to the player on their right.",
    "forbidden_alchemy": "Dark Powers: draw 3 cards, then return any 2 to the top of the deck.",
    "scrying_bones": "Dark Powers: search the main deck for a card, show it and take it.",
    "hail_yourself": "Dark Powers: every other player reveals their hand; take 1 card from any of them.",
    "voodoo": "Dark Powers: discard cards from your hand; the target removes as many from their stack.",
    "heavy_metal": "Dark Powers: discard the last card of every other player's Favor Stack.",
}

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


def card_family(name: str) -> str:
    if name in _DARK:
        return "dark"
    if name.startswith("favor_"):
        return "favor"
    return "counter" if name == "counter_spell" else "hijinx"


PRESENTATION = Presentation(
    card_text=CARD_TEXT,
    # The rulebook's spellings ("Hex-O-Rama"), the very titles the engine's labels use.
    card_titles=dict(zip(NAMES, TITLES, strict=True)),
    card_family=card_family,
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
