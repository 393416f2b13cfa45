"""Words and colours for the pages: how card names read and which family a card belongs to.

Only presentation lives here, and no game's: each game's card texts, titles, colours and
prompts are its own (services/engines/<game>/presentation.py, behind its GameSpec), read
through `presentation(game)`. What is here is the platform's: bots and variants in words.
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from services.engines.core.presentation import PLAIN, Presentation
from services.engines.registry import load_game


def presentation(game: Any) -> Presentation:
    """The game's own words (its GameSpec's presentation); plain words for a game that has
    none, or a name no installed game has."""
    try:
        return load_game(str(game)).presentation or PLAIN
    except KeyError:
        return PLAIN


# Bots in words: what playing against each is like (the engine's name stays on hover).
BOT_WORDS = {
    "random": ("Random bot", "plays any legal move at random"),
    "heuristic": ("Steady bot", "plays by sensible rules of thumb"),
    "ismcts": ("Deep bot", "thinks ahead by simulating many games (IS-MCTS); slower"),
}


def bot_words(bot: Any) -> str:
    """`heuristic` -> `Steady bot`; unknown bots keep their engine name."""
    text = str(bot or "")
    return BOT_WORDS.get(text.split(":")[0], (f"{text} bot", ""))[0]


def bot_about(bot: Any) -> str:
    text = str(bot or "")
    return BOT_WORDS.get(text.split(":")[0], ("", text))[1]


def variant_words(name: Any, game: Any = None) -> str:
    """A config field or choice in the game's words; else its name, spaced."""
    text = str(name)
    return presentation(game).config_words.get(text, text.replace("_", " "))


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
    """The rules text shown on hover and tap (a card object's may say more: its value)."""
    return presentation(game).text(card)


def card_title(name: Any, game: Any = None) -> str:
    """`hex_o_rama` -> `Hex-O-Rama` (the game's printed spelling); names that read well stay."""
    return presentation(game).title(str(name or ""))


def card_family(game: str, name: Any) -> str:
    """A CSS class for the card's family (colour only)."""
    return presentation(game).family(str(name or ""))


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
        # A template reads its game's words as `presentation(game).decisions`, `.words`...
        app.jinja_env.globals["presentation"] = presentation
        # The game's page macros (prompt, private, board): games/<game>.html, or the plain
        # page of a game that brings none (a game registered from outside the tree).
        app.jinja_env.globals["game_page"] = lambda game: app.jinja_env.select_template(
            [f"games/{game}.html", "games/_plain.html"]
        )

    app_or_bp.record_once(lambda state: install(state.app))
