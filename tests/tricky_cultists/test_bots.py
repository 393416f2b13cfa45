"""The heuristic bot: legal, deterministic, blind to hidden cards, and clearly better than random."""

from __future__ import annotations

import random

import pytest

from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.play import play_game
from services.engines.core.rng import Rng
from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.bots import HeuristicBot

from .setups import play, round_position

HEURISTIC_TEAM_0 = ["heuristic", "random", "heuristic", "random"]
HEURISTIC_TEAM_1 = ["random", "heuristic", "random", "heuristic"]


def test_heuristic_team_beats_random_team_with_partnerships_swapped():
    """Same seeds, each partnership in turn: the heuristic team wins far more than half."""
    seeds = range(150)
    score = 0.0
    for seed in seeds:
        score += play_game(GAME, None, 4, seed, HEURISTIC_TEAM_0, record_actions=False).returns[0]
        score += play_game(GAME, None, 4, seed, HEURISTIC_TEAM_1, record_actions=False).returns[1]
    rate = score / (2 * len(seeds))
    assert rate >= 0.8, f"heuristic team scored {rate:.2f}"  # observed about 0.99


def test_bot_picks_only_legal_actions_and_repeats_itself_for_a_seed():
    pick = random.Random(3)
    for seed in range(10):
        state = GAME.new_state(None, 4, seed)
        while not state.is_terminal():
            seat = state.actor
            legal = state.legal_actions(seat)
            choice = HeuristicBot(GAME, seed=seed).choose(state, seat, legal)
            assert choice in legal
            assert HeuristicBot(GAME, seed=seed).choose(state, seat, legal) == choice
            state.apply(seat, choice if pick.random() < 0.5 else pick.choice(legal))


def test_bot_does_not_look_at_hidden_cards():
    """G-3: re-dealing what the seat cannot see never changes the bot's choice."""
    for seed in range(12):
        state = GAME.new_state(None, 4, seed)
        step = 0
        while not state.is_terminal():
            seat = state.actor
            legal = state.legal_actions(seat)
            choice = HeuristicBot(GAME, seed=step).choose(state, seat, legal)
            if step % 3 == 0:
                twin = state.clone()
                twin.resample_hidden(seat, Rng(seed * 1000 + step))
                assert HeuristicBot(GAME, seed=step).choose(twin, seat, legal) == choice
            state.apply(seat, choice)
            step += 1


def test_bot_wins_cheaply_when_last_to_play():
    """Last to play, it takes the trick with its lowest winning card (also the most points)."""
    state = round_position(
        hands=(["Red 5", "Blue 7"], ["Red 9", "Red 1"], ["Blue 1", "Blue 2"], ["Red 12", "Red 10"]),
        tops=(2, 2, 2, 2),
    )
    play(state, "Red 5", "Red 9", "Blue 1")
    choice = HeuristicBot(GAME, seed=0).choose(state, 3, state.legal_actions(3))
    assert state.action_label(choice) == "play Red 10"


def test_bot_follows_low_when_partner_wins():
    state = round_position(
        hands=(["Red 5", "Blue 7"], ["Red 2", "Red 1"], ["Red 13", "Blue 2"], ["Red 12", "Red 10"]),
        tops=(2, 2, 2, 2),
    )
    play(state, "Red 5", "Red 2", "Red 13")
    choice = HeuristicBot(GAME, seed=0).choose(state, 3, state.legal_actions(3))
    assert state.action_label(choice) == "play Red 10"


def purple_choice(suspicion: list[int]) -> str:
    """Seat 0 triggers Purple; seat 3 leads seat 1 on points from an earlier round."""
    earlier = [[[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 9, 0, 0]]]
    state = round_position(
        hands=(["Purple 3", "Blue 7"], ["Blue 9", "Red 1"], ["Blue 1", "Blue 2"], ["Red 12", "Blue 3"]),
        tops=(2, 2, 2, 2),
        suspicion=suspicion,
        round_index=1,
        breakdown=earlier,
    )
    play(state, "Purple 3", "Blue 9", "Blue 1", "Blue 3")
    assert (state.phase, state.actor) == ("purple", 0)
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, 0, state.legal_actions(0)))


def test_bot_aims_purple_at_the_leading_opponent():
    """Seat 0 will discard its pile anyway (TK-10): the Suspicion goes to the leading opponent."""
    assert purple_choice([3, 0, 0, 0]) == "give seat 3 a Suspicion"


def test_bot_piles_suspicion_on_itself_to_discard_it():
    """The book's strategy note: one more makes seat 0 the strict highest, so it discards all."""
    assert purple_choice([2, 1, 0, 1]) == "give seat 0 a Suspicion"


def test_heuristic_is_made_by_name_and_takes_no_parameters():
    assert make_bot(GAME, "heuristic", seed=1).name == "heuristic"
    with pytest.raises(BadConfig):
        make_bot(GAME, "heuristic:depth=2")
