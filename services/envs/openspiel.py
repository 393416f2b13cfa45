"""The games as OpenSpiel Python games: importing this module registers each with pyspiel.

`pyspiel.load_game("python_crazy_cultists", {"players": 4})` then returns a game that
OpenSpiel's own algorithms (random rollouts, IS-MCTS, CFR-style tools on small configs) can
play. Actions are the environment's dense indices (services/engines/action_space.py), and the
observation and information-state tensors are the seat's encoded view (services/engines/observation.py), built
from the engine's redacted view only. The information state is that view, not a perfect
recall of every past observation: the views carry the public record the games keep.

The engines deal with their own seeded RNG (rulings G-2), so to OpenSpiel a game is
SAMPLED_STOCHASTIC: chance happens inside moves, and `resample_from_infostate` re-deals
what the observer cannot see through the engine's own `resample_hidden`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pyspiel

from services.engines.action_space import ActionTable, has_action_space
from services.engines.core.policy import VIEW, encoder_for
from services.engines.core.rng import Rng
from services.engines.observation import OBS_SIZE
from services.engines.registry import builtin_games

from .aec import make_state_factory

# The games with a fixed action space (OpenSpiel numbers actions densely).
GAMES = tuple(g for g in builtin_games() if has_action_space(g))
MAX_GAME_LENGTH = 20_000  # G-5's turn cap ends every game long before this many decisions


def _game_type(game: str) -> pyspiel.GameType:
    spec, _config, players = make_state_factory(game, None, None)
    return pyspiel.GameType(
        short_name=f"python_{game}",
        long_name=f"Python {spec.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=spec.max_players,
        min_num_players=spec.min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={"players": players, "seed": 0, "config": "{}"},
    )


def _make_game_class(game: str, game_type: pyspiel.GameType) -> type:
    class CultistsGame(pyspiel.Game):
        """`game` at `players` seats; `config` is the engine config as JSON text."""

        def __init__(self, params: dict[str, Any] | None = None) -> None:
            params = dict(params or {})
            config = orjson.loads(params.get("config", "{}") or "{}")
            self.spec, self.config, n = make_state_factory(game, params.get("players"), config)
            self.table = ActionTable(game, self.config, n)
            self.base_seed = int(params.get("seed", 0))
            self.made = 0
            info = pyspiel.GameInfo(
                num_distinct_actions=len(self.table),
                max_chance_outcomes=0,
                num_players=n,
                min_utility=0.0,
                max_utility=1.0,
                utility_sum=None,
                max_game_length=MAX_GAME_LENGTH,
            )
            super().__init__(game_type, info, params)

        def new_initial_state(self) -> CultistsState:
            self.made += 1
            return CultistsState(self, self.base_seed * 1_000_003 + self.made)

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> ViewObserver:
            return ViewObserver()

    CultistsGame.__name__ = f"{''.join(w.title() for w in game.split('_'))}Game"
    return CultistsGame


class CultistsState(pyspiel.State):
    """One position, wrapping the engine's state; the engine checks every move."""

    def __init__(self, game: Any, seed: int, state: Any = None) -> None:
        super().__init__(game)
        self.game_ref = game
        self.engine = (
            state if state is not None else game.spec.new_state(game.config, game.num_players(), seed)
        )

    def current_player(self) -> int:
        if self.engine.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return int(self.engine.to_act()[0])

    def _legal_actions(self, player: int) -> list[int]:
        table = self.game_ref.table
        return sorted(table.to_index(a) for a in self.engine.legal_actions(player))

    def _apply_action(self, action: int) -> None:
        seat = self.current_player()
        engine_action = self.game_ref.table.to_action(int(action))
        self.engine.apply(seat, engine_action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.engine.action_label(self.game_ref.table.to_action(int(action)))

    def is_terminal(self) -> bool:
        return self.engine.is_terminal()

    def returns(self) -> list[float]:
        return [float(r) for r in self.engine.returns()]

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> CultistsState:
        """A position `player_id` cannot tell from this one: hidden cards re-dealt."""
        twin = self.engine.clone()
        salt = int(np.random.randint(0, 2**31 - 1))
        twin.resample_hidden(player_id, Rng(salt))
        return CultistsState(self.game_ref, 0, twin)

    def clone(self) -> CultistsState:
        return CultistsState(self.game_ref, 0, self.engine.clone())

    def __str__(self) -> str:
        return orjson.dumps(self.engine.view(None)).decode()


class ViewObserver:
    """OpenSpiel's observer protocol over a seat's redacted view."""

    def __init__(self) -> None:
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: CultistsState, player: int) -> None:
        # The view's vector, as the AEC environment's observation (aec.py) computes it.
        self.tensor[:] = encoder_for(state.game_ref.spec.name, VIEW).dense(state.engine, player)

    def string_from(self, state: CultistsState, player: int) -> str:
        return orjson.dumps(state.engine.view(player), option=orjson.OPT_SORT_KEYS).decode()


def _register() -> None:
    registered = set(pyspiel.registered_names())
    for game in GAMES:
        game_type = _game_type(game)
        if game_type.short_name not in registered:
            pyspiel.register_game(game_type, _make_game_class(game, game_type))


_register()
