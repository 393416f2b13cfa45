"""Words and colours for the pages: how card names read and which family a card belongs to.

Only presentation lives here. What a card says and which family colours it come from the
game's own guide (`services/engines/<game>/guide.py`, the rulebook's words), so the page,
the How-to-play page and the card faces agree; the gateway holds no rules.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from services.engines.crazy_cultists.cards import NAMES as CRAZY_NAMES
from services.engines.crazy_cultists.cards import TITLES as CRAZY_TITLES
from services.engines.registry import load_guide

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
    """The rules text shown on hover, focus and tap, from the game's guide (its rulebook's
    words); Tricky Cultists' cards get their value and suit ability."""
    try:
        face = load_guide(game).face(card)
    except KeyError:
        return ""
    if face is None:
        return ""
    if isinstance(card, dict):
        value = card.get("value", 0)
        return f"{card.get('name')}, worth {value} point{'' if value == 1 else 's'}. {face.text}".strip()
    return face.text


def card_title(name: Any) -> str:
    """`hex_o_rama` -> `Hex-O-Rama` (the rulebook's spelling); names that read well stay."""
    text = str(name or "")
    if text in _CRAZY_TITLE:
        return _CRAZY_TITLE[text]
    if "_" in text or text.islower():
        return " ".join(part.capitalize() for part in text.split("_"))
    return text


def card_family(game: str, name: Any) -> str:
    """A CSS class for the card's family (colour only), as the game's guide groups its cards."""
    try:
        face = load_guide(game).face(str(name or ""))
    except KeyError:
        return "plain"
    return face.family if face is not None else "plain"


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
