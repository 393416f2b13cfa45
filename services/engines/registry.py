"""Game name -> rules module. The one list of games every layer looks games up in."""

from __future__ import annotations

import importlib

from .core.game import GameSpec
from .core.guide import Guide

GAME_MODULES: dict[str, str] = {
    "crazy_cultists": "services.engines.crazy_cultists",
    "trash_cult": "services.engines.trash_cult",
    "tricky_cultists": "services.engines.tricky_cultists",
}


def load_game(name: str) -> GameSpec:
    """The GameSpec for `name`; KeyError if no such game is installed."""
    module = GAME_MODULES[name]
    try:
        return importlib.import_module(module).GAME
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise KeyError(name) from None
        raise


def available_games() -> list[str]:
    out = []
    for name in GAME_MODULES:
        try:
            load_game(name)
        except KeyError:
            continue
        out.append(name)
    return out


def load_guide(name: str) -> Guide:
    """The game's words for players (`<game>/guide.py`: How to play, card faces, tips);
    KeyError if no such game is installed."""
    return importlib.import_module(f"{GAME_MODULES[name]}.guide").GUIDE
