"""A two-player game with a planted balance problem whose answer is known: the tuner's test bed.

Each seat makes one (meaningless) choice, then the winner is drawn: seat 0 wins with
probability `35% + 5% x seat0_edge`, so the printed default `seat0_edge = 7` gives seat 0
70 %, and the game is fair exactly at `seat0_edge = 3`. `decoy` changes nothing at all. A
tune searching both fields must come back with `seat0_edge = 3`, whatever `decoy` is.

It implements the whole `State` protocol (so sweeps, records and replays run on it
unchanged) but is registered only by the tests that use it, never in the real registry.

`stall` plants a side effect for the tuner's guard rails: each point of it ends 10 % of
games as a draw before the winner is drawn, so it lowers seat 0's win rate as surely as
`seat0_edge` does, but by making draws (the `draw_rate` guard must refuse it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.engines.core.errors import BadConfig, BadState
from services.engines.core.game import GameSpec, State
from services.engines.core.rng import Rng

FAIR_EDGE = 3  # 35 % + 5 % x 3 = 50 %


@dataclass(frozen=True)
class PlantedConfig:
    seat0_edge: int = 7  # as printed: seat 0 wins 70 %
    decoy: int = 0  # does nothing, so the tuner must learn to ignore it
    stall: int = 0  # each point: 10 % of games drawn (a side effect the guards must catch)
    max_turns: int = 10

    def validate(self) -> None:
        if not 0 <= self.seat0_edge <= 13:
            raise BadConfig(f"seat0_edge must be 0..13, got {self.seat0_edge}")
        if not 0 <= self.decoy <= 100:
            raise BadConfig(f"decoy must be 0..100, got {self.decoy}")
        if not 0 <= self.stall <= 10:
            raise BadConfig(f"stall must be 0..10, got {self.stall}")
        if self.max_turns < 2:
            raise BadConfig("max_turns must be at least 2")


def seat0_chance(config: PlantedConfig) -> float:
    """Seat 0's true win rate under `config`: what the tuner must estimate."""
    return (35 + 5 * config.seat0_edge) / 100


class PlantedState(State):
    FIELDS = ("chosen", "winner", "drawn")

    def __init__(
        self, config: Any, num_players: int, seed: int, deal_key: bytes | None = None, shuffle: int = 0
    ) -> None:
        super().__init__(config, num_players, seed, deal_key, shuffle)
        self.chosen: list[int] = []
        self.winner: int = -1
        self.drawn = False

    def to_act(self) -> list[int]:
        return [] if self.is_terminal() else [len(self.chosen)]

    def legal_actions(self, seat: int) -> list[int]:
        return [0, 1] if seat in self.to_act() else []

    def _apply(self, seat: int, action: int) -> None:
        self.chosen.append(action)
        self.turn += 1
        if len(self.chosen) == self.num_players:
            if self.config.stall and self.rng.below(10) < self.config.stall:
                self.drawn = True
                return
            self.winner = 0 if self.rng.below(100) < 35 + 5 * self.config.seat0_edge else 1

    def is_terminal(self) -> bool:
        return self.winner >= 0 or self.drawn

    def winners(self) -> list[int]:
        return [self.winner] if self.winner >= 0 else []

    def view(self, seat: int | None) -> dict[str, Any]:
        return {"chosen": list(self.chosen), "winner": self.winner}

    def action_label(self, action: int) -> str:
        return f"choice {action}"

    def check_invariants(self) -> None:
        if len(self.chosen) > self.num_players:
            raise BadState("more choices than seats")

    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Nothing is hidden."""


GAME = GameSpec(
    name="planted",
    title="Planted",
    min_players=2,
    max_players=2,
    default_players=2,
    config_class=PlantedConfig,
    state_class=PlantedState,
    summary="Seat 0's edge is a config field; fair at seat0_edge=3.",
)
