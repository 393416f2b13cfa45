"""The games registered as OpenSpiel Python games, played by OpenSpiel's own bots."""

from __future__ import annotations

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

from open_spiel.python.algorithms import ismcts, mcts  # noqa: E402
from open_spiel.python.bots.uniform_random import UniformRandomBot  # noqa: E402

import services.envs.openspiel  # noqa: E402,F401  (registers the games)
from services.engines.core.bots import make_bot  # noqa: E402

GAMES = ["trash_cult", "tricky_cultists", "crazy_cultists"]


def _ours(game, seat: int, seed: int):
    """Our heuristic bot, choosing through the OpenSpiel state's engine position."""
    bot = make_bot(game.spec, "heuristic", seed)

    def choose(state) -> int:
        engine = state.engine
        action = bot.choose(engine, seat, engine.legal_actions(seat))
        return game.table.to_index(action)

    return choose


@pytest.mark.parametrize("name", GAMES)
def test_loads_with_tensors_sized_as_declared(name: str) -> None:
    game = pyspiel.load_game(f"python_{name}")
    state = game.new_initial_state()
    player = state.current_player()
    assert len(state.observation_tensor(player)) == game.observation_tensor_size()
    assert len(state.information_state_tensor(player)) == game.information_state_tensor_size()
    assert all(0 <= a < game.num_distinct_actions() for a in state.legal_actions())
    assert state.observation_string(player) == state.information_state_string(player)


def test_player_count_is_a_parameter_and_a_refused_one_says_why() -> None:
    assert pyspiel.load_game("python_crazy_cultists", {"players": 5}).num_players() == 5
    with pytest.raises(ValueError, match="takes 3-6 players"):
        pyspiel.load_game("python_crazy_cultists", {"players": 2})


@pytest.mark.parametrize("name", GAMES)
def test_random_and_ismcts_play_full_games_against_ours(name: str) -> None:
    game = pyspiel.load_game(f"python_{name}")
    n = game.num_players()
    rng = np.random.RandomState(7)
    search = ismcts.ISMCTSBot(
        game,
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
        uct_c=2.0,
        max_simulations=4,
        random_state=rng,
    )
    for g in range(2):
        state = game.new_initial_state()
        bots = {0: search if g == 0 else UniformRandomBot(0, rng)}
        ours = {s: _ours(game, s, g * 10 + s) for s in range(1, n)}
        moves = 0
        while not state.is_terminal():
            seat = state.current_player()
            if seat in bots:
                action = bots[seat].step(state)
            else:
                action = ours[seat](state)
            assert action in state.legal_actions()
            state.apply_action(action)
            moves += 1
        returns = state.returns()
        assert len(returns) == n and moves > n
        # A win (1 to each winner, 0 else) or a draw shared equally (G-5).
        assert (set(returns) <= {0.0, 1.0} and 1.0 in returns) or returns == [1.0 / n] * n
