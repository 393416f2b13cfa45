"""Crazy Cultists' fixed action space, for the research environments (services/envs): every
action id a config can ever offer, built from the rules' own constants and the config's
sizes (services/engines/action_space.py explains why)."""

from __future__ import annotations

from typing import Any

from . import rules as cc


def all_actions(config: Any, players: int) -> list[int]:
    """Every action id a game of `config` at `players` seats can ever offer, in order."""
    kinds = cc.NUM_KINDS
    # PLAY + PLAY_ROOM * kind + target: every id below DISCARD the rules' own decoder reads as a play.
    ids = [a for a in range(cc.DISCARD) if cc.decode(a)[0] == "play"]
    ids += [cc.DISCARD + k for k in range(kinds)]
    ids += [cc.CHOOSE + k for k in range(kinds)]
    ids += [cc.TAKE + s * cc.TAKE_ROOM + k for s in range(players) for k in range(kinds)]
    ids += sorted(cc.FIXED)
    # A stack holds at most every card of both decks: Toiling Trouble pairs any two (CC-6).
    cards = sum(config.main_counts()) + sum(config.dark_counts())
    ids += [cc.pair_action(i, j) for j in range(1, cards) for i in range(j)]
    return ids
