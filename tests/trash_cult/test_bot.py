"""The heuristic bot: legal, deterministic, blind to hidden cards, and clearly better than random."""

from __future__ import annotations

import random

import pytest

from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.play import bot_seed, play_game
from services.engines.core.rng import Rng
from services.engines.trash_cult import GAME
from tests.support.positions import act
from tests.trash_cult.tables import table


@pytest.mark.parametrize(("players", "floor"), [(2, 0.8), (3, 0.7), (4, 0.6)])
def test_heuristic_beats_random(players, floor):
    """One heuristic seat (rotating) against random seats; observed win rates are about
    1.0 (2 players), 1.0 (3) and 0.96 (4), so the floors leave a wide margin."""
    games = 240
    won = 0
    for g in range(games):
        seat = g % players
        bots = ["random"] * players
        bots[seat] = "heuristic"
        record = play_game(GAME, None, players, 50_000 + g, bots, record_actions=False)
        won += record.winners == [seat]
    assert won / games >= floor


def test_heuristic_self_play_finishes_games():
    for seed in range(20):
        record = play_game(GAME, None, 4, seed, ["heuristic"] * 4, record_actions=False)
        assert record.winners or record.capped


def _decision_points(seed: int, count: int):
    """States along a heuristic-vs-random game where the deciding seat has a real choice."""
    state = GAME.new_state(None, 4, seed)
    pick = random.Random(seed)
    found = []
    while not state.is_terminal() and len(found) < count:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1 and pick.random() < 0.3:
            found.append(state.clone())
        state.apply(seat, pick.choice(legal))
    return found


def test_heuristic_returns_legal_actions_and_ignores_hidden_cards():
    """The bot reads only its view: re-dealing what its seat cannot see (other hands, deck
    order) never changes its choice; the same seed gives the same choice."""
    for seed in range(6):
        for state in _decision_points(seed, 25):
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            choice = make_bot(GAME, "heuristic", bot_seed(seed, seat)).choose(state, seat, legal)
            assert choice in legal
            twin = state.clone()
            twin.resample_hidden(seat, Rng(seed))
            again = make_bot(GAME, "heuristic", bot_seed(seed, seat)).choose(
                twin, seat, twin.legal_actions(seat)
            )
            assert again == choice


def test_heuristic_takes_no_parameters():
    with pytest.raises(BadConfig):
        make_bot(GAME, "heuristic:depth=3")


def _choice(state, seat):
    legal = state.legal_actions(seat)
    return state.action_label(make_bot(GAME, "heuristic", 1).choose(state, seat, legal))


def test_heuristic_answers_poison_and_hides_from_a_thunderstorm():
    """The plan in bots.py: a Protection Spell against poison aimed at its own members, a
    Hide against chaos that would cost Shrine food, a Convert when it has no member."""
    state = table(hands={0: ["Poison Their Punch"], 1: ["Protection Spell"]}, members={1: ["Skunk"]})
    act(state, 0, "Poison Their Punch: poison seat 1")
    assert _choice(state, 1) == "play Protection Spell"
    state = table(
        hostages={0: ["Rat", "Rat"]}, shrine={1: ["Pie"]}, hands={1: ["Hide"]}, chaos=["Thunderstorm"]
    )
    act(state, 0, "snackrifice 2 Rat Hostages")
    for seat in (1, 2, 3):
        act(state, seat, "let it happen")
    act(state, 0, "resolve the chaos card")
    assert _choice(state, 1) == "play Hide"
    state = table(hands={0: ["Convert Hostage", "Pie", "Hide"]}, hostages={0: ["Rat"]})
    assert _choice(state, 0) == "Convert Hostage: convert a Rat"


def test_evaluate_shares_out_progress_toward_the_win():
    """GameSpec.evaluate: sums to 1, and a fuller Shrine with a Cult Member leads."""
    state = table(members={2: ["Squirrel"]}, shrine={2: ["Cookie"] * 3, 1: ["Pie"]})
    values = GAME.evaluate(state)
    assert sum(values) == pytest.approx(1.0) and max(values) == values[2] and values[1] > values[0]


def test_ismcts_with_heuristic_rollouts_plays_legally():
    state = _decision_points(3, 1)[0]
    seat = state.to_act()[0]
    bot = make_bot(GAME, "ismcts:iterations=20,depth=12,rollout=heuristic", 5)
    assert bot.choose(state, seat, state.legal_actions(seat)) in state.legal_actions(seat)
