"""Tricky Cultists' `evaluate` (GameSpec.evaluate), which depth-limited IS-MCTS scores with."""

from __future__ import annotations

import random

from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.bots import evaluate


def _states(seed: int):
    state = GAME.new_state(None, 4, seed)
    pick = random.Random(seed)
    while not state.is_terminal():
        yield state
        seat = state.to_act()[0]
        state.apply(seat, pick.choice(state.legal_actions(seat)))
    yield state


def test_partners_share_a_win_chance_that_follows_the_lead():
    assert GAME.evaluate is evaluate
    for seed in range(3):
        for state in _states(seed):
            values = evaluate(state)
            assert values[0] == values[2] and values[1] == values[3]
            assert abs(values[0] + values[1] - 1) < 1e-9 and 0 <= values[0] <= 1
            if state.is_terminal():
                assert values == state.returns()
            elif state.round == 0 and state.phase == "draft":
                assert values[0] == 0.5  # nothing is settled before the first trick


def test_a_late_lead_counts_more_than_an_early_one():
    """The same 6 VP lead is a near-win late in the last round, only a tilt after round one."""
    early = GAME.new_state(None, 4, 1)  # drafting round 2 of 4, one round scored
    early.round, early.start = 1, 1
    early.breakdown = [[[0, 6, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]]
    late = GAME.new_state(None, 4, 1)  # the last round, one card left in each hand
    late.round, late.start, late.phase = 3, 3, "play"
    late.breakdown = [*early.breakdown, *([[0, 0, 0, 0] for _ in range(4)] for _ in range(2))]
    late.hands = [h[:1] for h in late.hands]
    assert 0.55 < evaluate(early)[0] < 0.75
    assert evaluate(late)[0] > 0.9
