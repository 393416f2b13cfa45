"""Trash Cult's fixed action space, for the research environments (services/envs): every
action id a config can ever offer, built from the rules' own constants and the config's
sizes (services/engines/action_space.py explains why)."""

from __future__ import annotations

from typing import Any

from .rules import N_ACTIONS


def all_actions(config: Any, players: int) -> list[int]:
    """Every action id a game of `config` at `players` seats can ever offer, in order."""
    return list(range(N_ACTIONS))
