"""Each game's fixed action space: every engine action id a config can ever offer, in order.

The engines number actions sparsely (Trash Cult: family bases from `FAMILIES`; Crazy
Cultists: `PLAY + 7 * kind + target`, `DISCARD + kind`, ... `PAIR + j(j-1)/2 + i`; Tricky
Cultists: `kind * STRIDE + argument`), so a learner's fixed-size output needs a dense index.
The table is built from the rules' own constants and the config's sizes (deck size, suits,
players), never guessed: an id the engine offers that is missing here is a bug the
environment reports by name rather than a silently dropped move.
"""

from __future__ import annotations

from typing import Any

from .crazy_cultists import rules as cc
from .trash_cult import rules as tc
from .tricky_cultists import rules as tk
from .tricky_cultists.cards import AGENDAS


def _trash_cult(config: Any, players: int) -> list[int]:
    return list(range(tc.N_ACTIONS))


def _crazy_cultists(config: Any, players: int) -> list[int]:
    kinds = cc.NUM_KINDS
    # PLAY + 7 * kind + target: every id below DISCARD the rules' own decoder reads as a play
    # (PLAY and NO_TARGET are C constants of the compiled module, not attributes of it).
    ids = [a for a in range(cc.DISCARD) if cc.decode(a)[0] == "play"]
    ids += [cc.DISCARD + k for k in range(kinds)]
    ids += [cc.CHOOSE + k for k in range(kinds)]
    ids += [cc.TAKE + s * 32 + k for s in range(players) for k in range(kinds)]
    ids += sorted(cc.FIXED)
    # A stack holds at most every card of both decks: Toiling Trouble pairs any two (CC-6).
    cards = sum(config.main_counts()) + sum(config.dark_counts())
    ids += [cc.pair_action(i, j) for j in range(1, cards) for i in range(j)]
    return ids


def _tricky_cultists(config: Any, players: int) -> list[int]:
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


BUILDERS = {
    "trash_cult": _trash_cult,
    "crazy_cultists": _crazy_cultists,
    "tricky_cultists": _tricky_cultists,
}


class ActionTable:
    """Engine action id <-> dense index for one game, config and player count."""

    def __init__(self, game: str, config: Any, players: int) -> None:
        self.game = game
        self.ids = BUILDERS[game](config, players)
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
