"""A two-player card game with one planted decisive card: the card reports' test bed.

The deck holds `crowns` Crowns, `stones` Stones and `leaves` Leaves (config counts). Each
seat is dealt `deal` cards, then plays one of them (a meaningless choice). The seat that was
dealt more Crowns wins with probability 9/10; equal Crowns (none, or one each) is a coin
flip. So a Crown in the opening hand decides the game, a Stone or a Leaf does nothing, and
an ablation must rank the Crown first.

It implements the whole `State` protocol with a `hands` field, as the real games do, so
card tracking, sweeps and records run on it unchanged; it is registered (with its card
catalogue and facts hook) only by the tests that use it, never in the real registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.engines.core.decks import build_deck
from services.engines.core.errors import BadConfig, BadState
from services.engines.core.game import GameSpec, State
from services.engines.core.rng import Rng

NAMES = ("Crown", "Stone", "Leaf")
COUNT_FIELDS = {"Crown": "crowns", "Stone": "stones", "Leaf": "leaves"}


@dataclass(frozen=True)
class PlantedCardsConfig:
    crowns: int = 2
    stones: int = 6
    leaves: int = 6
    deal: int = 2
    max_turns: int = 10

    def validate(self) -> None:
        for name in ("crowns", "stones", "leaves"):
            if not 0 <= getattr(self, name) <= 20:
                raise BadConfig(f"{name} must be 0..20, got {getattr(self, name)}")
        if not 1 <= self.deal <= 3:
            raise BadConfig(f"deal must be 1..3, got {self.deal}")
        if self.crowns + self.stones + self.leaves < 2 * self.deal:
            raise BadConfig(
                f"a deck of {self.crowns + self.stones + self.leaves} cannot deal {self.deal} a seat"
            )

    @property
    def kinds(self) -> list[int]:
        return build_deck([(0, self.crowns), (1, self.stones), (2, self.leaves)])


def labels_of(config: PlantedCardsConfig) -> list[str]:
    return [NAMES[k] for k in config.kinds]


class PlantedCardsState(State):
    FIELDS = ("deck", "hands", "crowns_dealt", "played", "winner")

    def __init__(
        self, config: Any, num_players: int, seed: int, deal_key: bytes | None = None, shuffle: int = 0
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        if config.crowns + config.stones + config.leaves < num_players * config.deal:
            raise BadConfig("the deck is too small to deal")
        kinds = config.kinds
        self.deck: list[int] = list(range(len(kinds)))
        self.rng.shuffle(self.deck)
        self.hands: list[list[int]] = [
            [self.deck.pop() for _ in range(config.deal)] for _ in range(num_players)
        ]
        self.crowns_dealt = [sum(1 for c in h if kinds[c] == 0) for h in self.hands]
        self.played: list[int] = []
        self.winner = -1
        self.turn = 1  # play has begun: the deal is the opening hand

    def to_act(self) -> list[int]:
        return [] if self.is_terminal() else [len(self.played)]

    def legal_actions(self, seat: int) -> list[int]:
        return sorted(self.hands[seat]) if seat in self.to_act() else []

    def _apply(self, seat: int, action: int) -> None:
        self.hands[seat].remove(action)
        self.played.append(action)
        if len(self.played) < self.num_players:
            self.turn += 1
            return
        a, b = self.crowns_dealt
        if a == b:
            self.winner = self.rng.below(2)
        else:
            strong = 0 if a > b else 1
            self.winner = strong if self.rng.below(10) < 9 else 1 - strong

    def is_terminal(self) -> bool:
        return self.winner >= 0

    def winners(self) -> list[int]:
        return [self.winner] if self.winner >= 0 else []

    def view(self, seat: int | None) -> dict[str, Any]:
        kinds = self.config.kinds
        return {
            "hand": [NAMES[kinds[c]] for c in self.hands[seat]] if seat is not None else [],
            "played": [NAMES[kinds[c]] for c in self.played],
            "winner": self.winner,
        }

    def action_label(self, action: int) -> str:
        return f"play {NAMES[self.config.kinds[action]]}"

    def action_detail(self, action: int) -> dict[str, Any]:
        return {"kind": "play", "card": NAMES[self.config.kinds[action]]}

    def check_invariants(self) -> None:
        if len(self.played) > self.num_players:
            raise BadState("more plays than seats")

    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Not needed by the random bot."""


def facts(state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]) -> dict[str, Any]:
    """Which seat played which card (the facts hook's shape, facts.py)."""
    played: dict[str, set[int]] = {}
    for seat, action in actions:
        played.setdefault(state.action_detail(action)["card"], set()).add(seat)
    return {"groups": {}, "played": {k: sorted(v) for k, v in sorted(played.items())}}


GAME = GameSpec(
    name="planted_cards",
    title="Planted cards",
    min_players=2,
    max_players=2,
    default_players=2,
    config_class=PlantedCardsConfig,
    state_class=PlantedCardsState,
    summary="The seat dealt more Crowns wins 9 games in 10.",
)
