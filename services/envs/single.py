"""One seat of a game as a Gymnasium environment; the engine's own bots play the others.

Observations and actions are the AEC environment's (a seat's encoded view and action mask,
one dense action index); a step plays the learner's action, then every other seat's until
the learner is asked again (its own reactions included) or the game ends. The reward is
the learner's return at the end (1 a win, 0 a loss, a draw shared).

An action outside the mask is never replaced by another move. With `illegal="lose"` (the
default, PettingZoo's TerminateIllegalWrapper convention, and what lets a generic checker
that samples any action of the space drive the env) it ends the episode with reward -1 and
`info["illegal_action"]` saying which action and why; with `illegal="raise"` it is a
ValueError and the game is unchanged.
"""

from __future__ import annotations

import random
from typing import Any

import gymnasium as gym
from gymnasium import spaces

from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig

from .aec import CultistsEnv


class SingleAgentEnv(gym.Env):
    """`seat` of `game` against the engine bot `opponents` (any name `make_bot` takes)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        game: str,
        seat: int = 0,
        opponents: str = "heuristic",
        players: int | None = None,
        config: dict[str, Any] | None = None,
        seed: int | None = None,
        illegal: str = "lose",
    ) -> None:
        if illegal not in ("lose", "raise"):
            raise ValueError(f"illegal must be 'lose' or 'raise', got {illegal!r}")
        self.illegal = illegal
        self.aec = CultistsEnv(game, players=players, config=config, seed=seed)
        n = len(self.aec.possible_agents)
        if not 0 <= seat < n:
            raise ValueError(f"{game}: seat {seat} is outside 0..{n - 1}")
        try:
            make_bot(self.aec.spec, opponents, 0)
        except BadConfig as exc:
            raise ValueError(f"{game}: opponents refused: {exc}") from None
        self.seat = seat
        self.opponents = opponents
        self.agent = self.aec.possible_agents[seat]
        self.observation_space = self.aec.observation_space(self.agent)
        self.action_space = spaces.Discrete(len(self.aec.table))
        self._bots: dict[int, Any] = {}
        self._lost = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        picks = random.Random(self.aec.state.seed)
        self._bots = {
            s: make_bot(self.aec.spec, self.opponents, picks.getrandbits(32))
            for s in range(len(self.aec.possible_agents))
            if s != self.seat
        }
        self._lost = False
        self._play_others()
        return self.aec.observe(self.agent), {}

    def step(self, action: int):
        state = self.aec.state
        if state is None or state.is_terminal() or self._lost:
            raise ValueError("the episode is over: call reset() first")
        try:
            self.aec.apply_index(self.seat, action)
        except ValueError as exc:
            if self.illegal == "raise":
                raise
            self._lost = True
            return self.aec.observe(self.agent), -1.0, True, False, {"illegal_action": str(exc)}
        self._play_others()
        done = state.is_terminal()
        reward = float(state.returns()[self.seat]) if done else 0.0
        return self.aec.observe(self.agent), reward, done, False, {}

    def _play_others(self) -> None:
        state = self.aec.state
        while not state.is_terminal():
            seat = state.to_act()[0]
            if seat == self.seat:
                return
            legal = state.legal_actions(seat)
            state.apply(seat, self._bots[seat].choose(state, seat, legal), legal)
