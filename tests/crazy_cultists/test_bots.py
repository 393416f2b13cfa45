"""The heuristic bot: legal, fair (sees only its own view) and clearly better than random."""

from __future__ import annotations

import random

from services.engines.core.bots import make_bot
from services.engines.core.play import play_game
from services.engines.core.rng import Rng
from services.engines.crazy_cultists import GAME

from .tables import table


def test_heuristic_beats_random_clearly():
    """Seat rotates; 1 heuristic against 3 random bots, where a fair share would be 25%."""
    games, wins = 240, 0
    for seed in range(games):
        seat = seed % 4
        bots = ["random"] * 4
        bots[seat] = "heuristic"
        config = {
            "dark_powers": seed % 3 == 0,
            "variant": ("base", "fiendish", "devilish", "beast")[seed % 4],
        }
        record = play_game(GAME, config, 4, seed, bots, record_actions=False)
        wins += seat in record.winners
    assert wins / games >= 0.40  # observed about 0.6


def test_heuristic_only_picks_legal_actions_and_ignores_hidden_cards():
    """G-3: re-dealing what the bot cannot see never changes its choice."""
    for seed in range(6):
        state = GAME.new_state(
            {"dark_powers": True, "variant": "fiendish", "two_players": True}, 2 + seed % 5, seed
        )
        pick = random.Random(seed)
        step = 0
        while not state.is_terminal():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            choice = make_bot(GAME, "heuristic", seed=step).choose(state, seat, legal)
            assert choice in legal
            if step % 5 == 0:
                twin = state.clone()
                twin.resample_hidden(seat, Rng(step))
                assert make_bot(GAME, "heuristic", seed=step).choose(twin, seat, legal) == choice
            state.apply(seat, choice if pick.random() < 0.5 else pick.choice(legal))
            step += 1


def test_evaluate_shares_out_progress_toward_the_win():
    """GameSpec.evaluate: sums to 1, and more candles and a fuller stack lead."""
    state = table(stacks={1: ["favor_4", "favor_4"], 2: ["favor_1"]}, candles=[0, 0, 2, 0])
    values = GAME.evaluate(state)
    assert abs(sum(values) - 1) < 1e-9
    assert values[2] > values[1] > values[0] == values[3]


def test_ismcts_plays_a_legal_game_with_early_stopped_rollouts():
    record = play_game(GAME, {"dark_powers": True}, 3, 2, ["ismcts:iterations=8,depth=6", "random", "random"])
    assert record.winners or record.capped
