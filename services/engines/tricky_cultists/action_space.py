"""Tricky Cultists's fixed action space, for the research environments (services/envs): every
action id a config can ever offer, built from the rules' own constants and the config's
sizes (services/engines/action_space.py explains why)."""

from __future__ import annotations

from typing import Any

from . import rules as tk
from .cards import AGENDAS


def all_actions(config: Any, players: int) -> list[int]:
    """Every action id a game of `config` at `players` seats can ever offer, in order."""
    s, cards = tk.STRIDE, config.cards
    ids = [tk.PLAY * s + c for c in range(cards)]
    ids += [tk.KEEP * s + k for k in range(len(AGENDAS))]
    ids += [tk.DECLINE * s]
    ids += [tk.BONUS * s + u for u in range(len(config.suits))]
    ids += [tk.TRUMP * s + u for u in range(len(config.suits))]
    ids += [tk.TAKE * s + c for c in range(cards)]
    ids += [tk.SWAP * s + h * cards + c for h in range(cards) for c in range(cards)]
    ids += [tk.GIVE * s + seat for seat in range(players)]
    ids += [tk.STEAL * s + c for c in range(cards)]
    ids += [tk.PASS * s]
    return ids
