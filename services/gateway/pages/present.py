"""Words and colours for the pages: how card names read and which family a card belongs to.

Only presentation lives here. The families below decide a card's colour on the page and
nothing else; what a card does is the engines' business (the gateway holds no rules).
"""

from __future__ import annotations

from typing import Any

from flask import Flask

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
    "evil_eye": "Evil Eye: take a card from the hand shown, or none",
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
    "protect": "Protection Spell?",
    "perk": "Use the perk",
    "chaos": "Chaos card",
    "steal": "Pigeon Thief: keep the stolen card or play it",
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


def card_title(name: Any) -> str:
    """`favor_3` -> `Favor 3`; names that already read well stay as they are."""
    text = str(name or "")
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
        app.jinja_env.globals.update(
            CRAZY_PENDING=CRAZY_PENDING,
            TRASH_PENDING=TRASH_PENDING,
            TRICKY_PHASE=TRICKY_PHASE,
            TRASH_FOOD=TRASH_FOOD,
        )

    app_or_bp.record_once(lambda state: install(state.app))
