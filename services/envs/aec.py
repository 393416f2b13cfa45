"""The games as PettingZoo AEC environments: one agent per seat, turns as the engine asks.

The engine's state names who must decide now (`to_act`), including out-of-turn answers
(Counter-Spell CC-7, Protection Spell TC-10, Hide TC-9): the environment simply hands the
turn to the first seat it names, so a reaction is an ordinary turn of the seat asked.
Observations are `{"observation": encode_view(view(seat)), "action_mask": ...}` (computed
straight from the state where the game can: the same numbers); rewards are the game's
returns (1 a win, 0 a loss, a draw shared), given once, at the end.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from services.engines.action_space import ActionTable
from services.engines.core.errors import BadConfig
from services.engines.core.game import State
from services.engines.core.policy import VIEW, encoder_for
from services.engines.observation import OBS_SIZE
from services.engines.registry import load_game


def make_state_factory(game: str, players: int | None, config: dict[str, Any] | None) -> tuple[Any, Any, int]:
    """(spec, config object, players) after the engine's own checks, refused in words."""
    try:
        spec = load_game(game)
    except KeyError:
        raise ValueError(f"unknown game {game!r}") from None
    try:
        made = spec.make_config(dict(config or {}))
        n = spec.default_players if players is None else players
        least = spec.min_players_for(made)
        if not least <= n <= spec.max_players:
            raise BadConfig(
                f"{spec.title} takes {least}-{spec.max_players} players with this config, not {n}"
            )
        spec.new_state(made, n, 0)
    except BadConfig as exc:
        raise ValueError(f"{game}: config refused: {exc}") from None
    return spec, made, n


class CultistsEnv(AECEnv):
    """One game of `game` at `players` seats, as a PettingZoo AEC environment."""

    metadata = {"name": "cultists_v0", "is_parallelizable": False, "render_modes": ["ansi"]}

    def __init__(
        self,
        game: str,
        players: int | None = None,
        config: dict[str, Any] | None = None,
        seed: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self.spec, self.config, n = make_state_factory(game, players, config)
        self.game = game
        # The view's vector (observation.py), straight from the state where the game's
        # features.py computes it (Trash Cult, Crazy Cultists: the same numbers, without
        # building the view; tests/envs/test_view_features.py), as the policy bot reads it.
        self._encoder = encoder_for(game, VIEW)
        self.table = ActionTable(game, self.config, n)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        obs = spaces.Dict(
            {
                "observation": spaces.Box(-1e9, 1e9, (OBS_SIZE,), np.float32),
                "action_mask": spaces.Box(0, 1, (len(self.table),), np.int8),
            }
        )
        self.observation_spaces = {a: obs for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(len(self.table)) for a in self.possible_agents}
        self._seeds = random.Random(seed)
        # None until reset(): the AEC API is used only after it (render() checks).
        self.state: State = None  # type: ignore[assignment]
        self.metadata = {**self.metadata, "name": f"{game}_v0"}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # --- the AEC protocol ----------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._seeds = random.Random(seed)
        game_seed = self._seeds.getrandbits(62)
        self.state = self.spec.new_state(self.config, len(self.possible_agents), game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.state.to_act()[0]]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat[agent]
        return {"observation": self._encoder.dense(self.state, seat), "action_mask": self.mask(seat)}

    def mask(self, seat: int) -> np.ndarray:
        """1 at the index of every action legal for `seat` now."""
        out = np.zeros(len(self.table), dtype=np.int8)
        for action in self.state.legal_actions(seat):
            out[self.table.to_index(action)] = 1
        return out

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seat[agent]
        if action is None:
            raise ValueError(f"{agent} must act: None is only for a finished agent")
        self._cumulative_rewards[agent] = 0.0
        self.apply_index(seat, action)
        if self.state.is_terminal():
            for a, r in zip(self.agents, self.state.returns(), strict=True):
                self.rewards[a] = r
                self.terminations[a] = True
            self.infos = {a: {"winners": self.state.winners()} for a in self.agents}
        else:
            self._clear_rewards()
            self.agent_selection = self.possible_agents[self.state.to_act()[0]]
        self._accumulate_rewards()

    def apply_index(self, seat: int, index: Any) -> None:
        """Play action `index` for `seat`; ValueError, the game unchanged, if it is masked off."""
        agent = self.possible_agents[seat]
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise ValueError(f"{agent}'s action must be a whole number index, got {index!r}")
        index = int(index)
        legal = self.state.legal_actions(seat)
        engine_action = self.table.to_action(index)
        if engine_action not in legal:
            allowed = sorted(self.table.to_index(a) for a in legal)
            raise ValueError(
                f"action {index} ({self.state.action_label(engine_action)}) is not in {agent}'s action mask;"
                f" legal indices: {allowed[:20]}"
            )
        self.state.apply(seat, engine_action, legal)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.state is None:
            return None
        return str(self.state.view(None))

    def close(self) -> None:
        self.state = None  # type: ignore[assignment]  # (as before reset())
