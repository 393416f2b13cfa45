"""The nightly balance suite and its comparison with the night before.

Suite: every installed game, its base rules and each variant switch of its GameSpec's
`variants` on its own (`variant_grid`), every player count it supports, with the game's heuristic bot in every seat
(the random bot where a game has none) — the closest a bot sweep gets to how people play.
The size is `NIGHTLY_GAMES` games per cell when set; otherwise 400 (Crazy Cultists' 30
cells), and more for the games with few cells where 400 could not catch a one-card change
(`DEFAULT_GAMES_BY_GAME`, chosen from the bench's power table, docs/sweeps.md).

The master seed is fixed (`NIGHTLY_SEED`, default 20240101), so two nights play the same
deals with the same bots: unchanged code gives identical numbers, and any move is caused
by a change in rules, bots or config defaults. Running a night and comparing it with the
last one is `night.py`; the test that decides whether a metric drifted is `drift.py`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any

from services.engines.registry import available_games, load_game

from .spec import SweepSpec, parse_spec

DEFAULT_GAMES = 400
# Games per cell where the default is not enough to catch a one-card change, chosen from
# the power table of `make bench` (bench/power.py; docs/sweeps.md, "The size of a night"):
# Trash Cult's 3 cells and Tricky Cultists' one are cheap, Crazy Cultists' 30 are not.
DEFAULT_GAMES_BY_GAME: dict[str, int] = {"trash_cult": 2000, "tricky_cultists": 2000}
DEFAULT_SEED = 20240101
# Config every cell of a game's suite gets: the switches that let it play every player
# count its GameSpec lists. Crazy Cultists plays 2 players only as the sweep variant (CC-2).
SUITE_CONFIG: dict[str, dict[str, Any]] = {"crazy_cultists": {"two_players": True}}


def variant_grid(game: str) -> list[dict[str, Any]]:
    """The base rules, then each of the game's variant switches on its own.

    `GameSpec.variants` names the config fields that are variants. A bool field is turned
    on; a text field takes each value its config module lists in `<FIELD>S` (e.g.
    `VARIANTS = ("base", "devilish", ...)`) other than the default. One switch at a time
    keeps the nightly small and makes each cell read as "this variant against base".
    """
    gspec = load_game(game)
    defaults = {f.name: f for f in dataclasses.fields(gspec.config_class)}
    module = sys.modules[gspec.config_class.__module__]
    grid: list[dict[str, Any]] = [{}]
    for name in gspec.variants:
        f = defaults.get(name)
        if f is None:
            continue
        if f.type in (bool, "bool"):
            grid.append({name: not f.default})
            continue
        for value in getattr(module, f"{name.upper()}S", ()):
            if value != f.default:
                grid.append({name: value})
    return grid


def suite_spec(game: str, games: int, seed: int) -> SweepSpec:
    gspec = load_game(game)
    bot = "heuristic" if "heuristic" in gspec.bots else "random"
    return parse_spec(
        {
            "name": f"nightly {game}",
            "game": game,
            "seed": seed,
            "games": games,
            "players": list(range(gspec.min_players, gspec.max_players + 1)),
            "config": SUITE_CONFIG.get(game, {}),
            "grid": variant_grid(game),
            "lineups": [bot],
            "chunk": max(50, min(250, games // 2)),
        }
    )


def default_games(game: str) -> int:
    """Games per cell of `game`'s suite when neither `--games` nor NIGHTLY_GAMES says."""
    return DEFAULT_GAMES_BY_GAME.get(game, DEFAULT_GAMES)


def standard_suite(games: int | None = None, seed: int | None = None) -> list[SweepSpec]:
    given = games or (int(os.environ["NIGHTLY_GAMES"]) if os.environ.get("NIGHTLY_GAMES") else None)
    seed = int(os.environ.get("NIGHTLY_SEED", DEFAULT_SEED)) if seed is None else seed
    return [suite_spec(game, given or default_games(game), seed) for game in available_games()]
