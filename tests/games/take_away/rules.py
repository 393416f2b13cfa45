"""Take Away's rules, in the shape every game's rules take (services/engines/core/game.py).

Card ids 0..pile-1: ids below `skips` are Skip cards, the rest are blanks. The deck's top
is its end. Actions: SKIP (play a Skip card from your hand: the turn passes) or TAKE + n
(take the deck's top n cards into your hand).
"""

from __future__ import annotations

from typing import Any

from services.engines.core.decks import check_conservation, redeal
from services.engines.core.errors import BadState
from services.engines.core.game import State
from services.engines.core.rng import Rng

SKIP = 0
TAKE = 0  # + n, n >= 1: take n cards


class TakeAwayState(State):
    FIELDS = ("deck", "hands", "discard", "active", "winner")

    def __init__(
        self, config: Any, num_players: int, seed: int, deal_key: bytes | None = None, shuffle: int = 0
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        self.deck = list(range(config.pile))
        self.rng.shuffle(self.deck)
        self.hands: list[list[int]] = [[] for _ in range(num_players)]
        self.discard: list[int] = []
        self.active = self.rng.below(num_players)
        self.winner = -1

    # --- the decision vocabulary --------------------------------------------------------
    def to_act(self) -> list[int]:
        return [] if self.winner >= 0 else [self.active]

    def is_terminal(self) -> bool:
        return self.winner >= 0

    def winners(self) -> list[int]:
        return [self.winner] if self.winner >= 0 else []

    def legal_actions(self, seat: int) -> list[int]:
        if self.winner >= 0 or seat != self.active:
            return []
        takes = [TAKE + n for n in range(1, min(self.config.max_take, len(self.deck)) + 1)]
        holds_skip = any(c < self.config.skips for c in self.hands[seat])
        return ([SKIP] if holds_skip else []) + takes

    def _apply(self, seat: int, action: int) -> None:
        hand = self.hands[seat]
        if action == SKIP:
            card = min(c for c in hand if c < self.config.skips)
            hand.remove(card)
            self.discard.append(card)
            self.emit("skip", seat, "plays a Skip card")
        else:
            for _ in range(action - TAKE):
                hand.append(self.deck.pop())
            hand.sort()
            self.emit("take", seat, "takes {} card(s); {} left", action - TAKE, len(self.deck))
            if not self.deck:
                self.winner = seat
                self.emit("win", seat, "takes the last card and wins")
                return
        self.active = (seat + 1) % self.num_players
        self.turn += 1

    # --- what a seat sees ---------------------------------------------------------------
    def view(self, seat: int | None) -> dict[str, Any]:
        return {
            "pile": len(self.deck),
            "active": self.active,
            "taken": [len(h) for h in self.hands],
            "winner": self.winner,
            "hand": list(self.hands[seat]) if seat is not None else [],
            "hand_sizes": [len(h) for h in self.hands],
        }

    def action_label(self, action: int) -> str:
        if action == SKIP:
            return "play a Skip card"
        n = action - TAKE
        return f"take {n} card{'' if n == 1 else 's'}"

    def action_detail(self, action: int) -> dict[str, Any]:
        if action == SKIP:
            return {"kind": "skip", "card": "skip"}
        return {"kind": "take", "count": action - TAKE}

    def check_invariants(self) -> None:
        if len(self.hands) != self.num_players:
            raise BadState(f"expected {self.num_players} hands, got {len(self.hands)}")
        check_conservation([self.deck, self.discard, *self.hands], self.config.pile)
        if not (0 <= self.active < self.num_players) or not (-1 <= self.winner < self.num_players):
            raise BadState("active or winner is no seat")
        if any(c >= self.config.skips for c in self.discard):
            raise BadState("only Skip cards are ever discarded")

    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """The deck and the other hand are hidden from `observer`; sizes stay."""
        others = [h for s, h in enumerate(self.hands) if s != observer]
        redeal([self.deck, *others], rng)
        for h in others:
            h.sort()
