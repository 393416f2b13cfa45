"""Words and colours for the pages: how card names read and which family a card belongs to.

Only presentation lives here. The families below decide a card's colour on the page and
nothing else; what a card does is the engines' business (the gateway holds no rules).
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from services.engines.crazy_cultists.cards import NAMES as CRAZY_NAMES
from services.engines.crazy_cultists.cards import TITLES as CRAZY_TITLES

# Crazy Cultists: the Dark Powers expansion's cards (CC-10) look different from the main deck.
_CRAZY_DARK = {
    "dark_favor_4", "life_siphon", "black_spire", "necromancy", "dark_baptism", "ouija",
    "fear_the_reaper", "puppet_master", "forbidden_alchemy", "scrying_bones", "hail_yourself",
    "voodoo", "heavy_metal",
}  # fmt: skip
_TRASH_FAMILY = {
    **dict.fromkeys(("Raccoon", "Skunk", "Squirrel", "Rat"), "animal"),
    **dict.fromkeys(("Pizza", "Pie", "Cookie", "Donut"), "food"),
    **dict.fromkeys(("Pigeon Thief", "Poison Their Punch", "Opossum Plushie", "Convert Hostage"), "action"),
    **dict.fromkeys(("Protection Spell", "Hide"), "answer"),
}
# Which food each Trash Cult cult worships (the rulebook's pairs), to show a Shrine's goal.
TRASH_FOOD = {"Raccoon": "Pizza", "Skunk": "Pie", "Squirrel": "Cookie", "Rat": "Donut"}

CRAZY_PENDING = {
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
TRASH_PENDING = {
    "cult": "Pick a cult",
    "protect": "Answer with a Protection Spell?",
    "perk": "Use the perk",
    "chaos": "Chaos card",
    "steal": "Pigeon Thief: keep the stolen card or play it",
}
# What opened a Protection Spell window, in words (the engine's event names).
PROTECT_WORDS = {
    "plushie": "plays Opossum Plushie",
    "snackrifice": "Snackrifices",
    "poison": "plays Poison Their Punch",
}
TRICKY_PHASE = {
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


# Crazy Cultists' machine names as the rulebook prints them ("Hex-O-Rama", "Beelze-Beatdown"),
# the very titles the engine's labels and log use, so the page and the log agree.
_CRAZY_TITLE = dict(zip(CRAZY_NAMES, CRAZY_TITLES, strict=True))

# What each card does, in the rulebooks' words (Crazy Cultists, Trash Cult) and the rulings'
# (TC-11 chaos cards, TK-7 suit abilities), shown on hover and on tap.
CARD_TEXT: dict[str, dict[str, str]] = {
    "crazy_cultists": {
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
    },
    "trash_cult": {
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
    },
    "tricky_cultists": {
        "Red": "Red led: the second-highest Red card sets the trump suit.",
        "Green": "Green led: the second-highest Green card may take a card from their Codex.",
        "Blue": "Blue led: the second-highest Blue card may swap a hand card with a Codex card.",
        "Purple": "Purple led: the second-highest Purple card gives anyone a Suspicion.",
    },
}

# Bots in words: what playing against each is like (the engine's name stays on hover).
BOT_WORDS = {
    "random": ("Random bot", "plays any legal move at random"),
    "heuristic": ("Steady bot", "plays by sensible rules of thumb"),
    "ismcts": ("Deep bot", "thinks ahead by simulating many games (IS-MCTS); slower"),
}
# Variant fields and values in words.
VARIANT_WORDS = {
    "variant": "Rules variant",
    "dark_powers": "Dark Powers expansion",
    "optional_setup": "Dark Powers' smaller main deck",
    "base": "standard: 5 candles, 10 favor each",
    "devilish": "devilish: a candle resets every stack",
    "fiendish": "fiendish: exactly 10 favor, or lose the stack",
    "beast": "beast: 6 favor a candle, 3 candles win (short)",
}


# Answers whose action names no card, though one card is what answers (it leaves the hand).
ANSWER_CARD = {"protection_spell": "Protection Spell", "hide": "Hide", "counter": "counter_spell"}


def bot_words(bot: Any) -> str:
    """`heuristic` -> `Steady bot`; unknown bots keep their engine name."""
    text = str(bot or "")
    return BOT_WORDS.get(text.split(":")[0], (f"{text} bot", ""))[0]


def bot_about(bot: Any) -> str:
    text = str(bot or "")
    return BOT_WORDS.get(text.split(":")[0], ("", text))[1]


def variant_words(name: Any) -> str:
    text = str(name)
    return VARIANT_WORDS.get(text, text.replace("_", " "))


def display_name(seat: Any) -> str:
    """A seat as the page and log call it: its player's name, or its bot in words."""
    if seat.kind == "bot":
        return f"{bot_words(seat.bot)} {seat.index}"
    return seat.player or f"Seat {seat.index}"


def display_names(seats: Any) -> list[str]:
    return [display_name(s) for s in seats]


def you_for(names: list[str], me: int) -> list[str]:
    """The seats' names with the player's own seat as "you" (prompts speak to the player)."""
    return ["you" if i == me else n for i, n in enumerate(names)]


def card_text(game: str, card: Any) -> str:
    """The rules text shown on hover and tap; Tricky Cultists' cards get value and suit ability."""
    if game == "tricky_cultists" and isinstance(card, dict):
        value = card.get("value", 0)
        worth = f"worth {value} point{'' if value == 1 else 's'}"
        return f"{card.get('name')}, {worth}. {CARD_TEXT[game].get(card.get('suit', ''), '')}".strip()
    return CARD_TEXT.get(game, {}).get(str(card), "")


def card_title(name: Any) -> str:
    """`hex_o_rama` -> `Hex-O-Rama` (the rulebook's spelling); names that read well stay."""
    text = str(name or "")
    if text in _CRAZY_TITLE:
        return _CRAZY_TITLE[text]
    if "_" in text or text.islower():
        return " ".join(part.capitalize() for part in text.split("_"))
    return text


def card_family(game: str, name: Any) -> str:
    """A CSS class for the card's family (colour only)."""
    text = str(name or "")
    if game == "crazy_cultists":
        if text in _CRAZY_DARK:
            return "dark"
        if text.startswith("favor_"):
            return "favor"
        return "counter" if text == "counter_spell" else "hijinx"
    if game == "trash_cult":
        return _TRASH_FAMILY.get(text, "chaos")
    return "plain"


def seat_list(values: Any) -> str:
    """`[1, 3]` -> `1,3`, the form data attributes carry."""
    return ",".join(str(v) for v in values or ())


def register_filters(app_or_bp: Any) -> None:
    """Installs the filters on the app the blueprint is registered on."""

    def install(app: Flask) -> None:
        app.jinja_env.filters["card_title"] = card_title
        app.jinja_env.filters["card_family"] = card_family
        app.jinja_env.filters["seat_list"] = seat_list
        app.jinja_env.filters["bot_words"] = bot_words
        app.jinja_env.filters["bot_about"] = bot_about
        app.jinja_env.filters["variant_words"] = variant_words
        app.jinja_env.filters["you_for"] = you_for
        app.jinja_env.globals["card_text"] = card_text
        app.jinja_env.globals.update(
            CRAZY_PENDING=CRAZY_PENDING,
            TRASH_PENDING=TRASH_PENDING,
            TRICKY_PHASE=TRICKY_PHASE,
            TRASH_FOOD=TRASH_FOOD,
            ANSWER_CARD=ANSWER_CARD,
            PROTECT_WORDS=PROTECT_WORDS,
        )

    app_or_bp.record_once(lambda state: install(state.app))
