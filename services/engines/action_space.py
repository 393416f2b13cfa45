"""Each game's fixed action space: every engine action id a config can ever offer, in order.

The engines number actions sparsely (Trash Cult: family bases from `FAMILIES`; Crazy
Cultists: `PLAY + 7 * kind + target`, `DISCARD + kind`, ... `PAIR + j(j-1)/2 + i`; Tricky
Cultists: `kind * STRIDE + argument`), so a learner's fixed-size output needs a dense index.
Each game's table (`all_actions` in its package's `action_space.py`) is built from the rules'
own constants and the config's sizes (deck size, suits, players), never guessed: an id the engine offers that is missing here is a bug the
environment reports by name rather than a silently dropped move.
"""

from __future__ import annotations

from typing import Any

from .registry import has_part, load_part


def has_action_space(game: str) -> bool:
    """Whether `game` declares its fixed action space (its package's `action_space.py`)."""
    return has_part(game, "action_space")


class ActionTable:
    """Engine action id <-> dense index for one game, config and player count."""

    def __init__(self, game: str, config: Any, players: int) -> None:
        self.game = game
        if not has_action_space(game):
            raise ValueError(f"{game}: no fixed action space (its package has no action_space.py)")
        self.ids = load_part(game, "action_space").all_actions(config, players)
        self.index = {a: i for i, a in enumerate(self.ids)}
        if len(self.index) != len(self.ids):
            raise AssertionError(f"{game}: the action table lists an id twice")

    def __len__(self) -> int:
        return len(self.ids)

    def to_index(self, action: int) -> int:
        try:
            return self.index[action]
        except KeyError:
            raise ValueError(f"{self.game}: engine action {action} is outside the action space") from None

    def to_action(self, index: int) -> int:
        if not 0 <= index < len(self.ids):
            raise ValueError(f"{self.game}: action index {index} is outside 0..{len(self.ids) - 1}")
        return self.ids[index]
