"""Random games across player counts, variants and flags, checked at every step."""

from __future__ import annotations

import itertools
import random

import pytest

from services.engines.core.game import State
from services.engines.core.play import play_game
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.proto import MESSAGES
from tests.support.random_play import check_random_games

VARIANTS = ("base", "devilish", "fiendish", "beast")
FLAGS = list(itertools.product((False, True), (False, True)))  # dark_powers, optional_setup
GAMES_PER_CONFIG = 25  # x 80 configurations = 2,000 games


def _turn_start_checks(state: State) -> None:
    """CC-2/CC-3: nobody holds more than the hand limit when a turn starts; labels are distinct."""
    if state.pending is None:
        limit = state.config.hand_limit
        assert all(len(hand) <= limit for hand in state.hands), "a hand is over the limit at turn start"
    seat = state.to_act()[0]
    legal = state.legal_actions(seat)
    if len(legal) > 1:
        assert len({state.action_label(a) for a in legal}) == len(legal), "two legal actions share a label"


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("variant", VARIANTS)
def test_random_games_keep_every_invariant(players, variant):
    for i, (dark, optional) in enumerate(FLAGS):
        config = {"variant": variant, "dark_powers": dark, "optional_setup": optional}
        config["two_players"] = players == 2  # CC-2: the sweep variant
        finals = check_random_games(
            GAME,
            players,
            GAMES_PER_CONFIG,
            seed=10_000 * players + 1_000 * i + 100 * VARIANTS.index(variant),
            config=config,
            roundtrip_every=41,
            leak_every=17,
            extra=_turn_start_checks,
        )
        assert all(s.winners() or s.turn == s.config.max_turns for s in finals)


def test_views_and_action_details_fit_the_protobuf_messages():
    for seed, players in enumerate((2, 3, 4, 5, 6) * 2):
        config = {"dark_powers": True, "variant": VARIANTS[seed % 4], "two_players": players == 2}
        state = GAME.new_state(config, players, seed)
        pick = random.Random(seed)
        step = 0
        while not state.is_terminal():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            if step % 7 == 0 or (state.pending is not None and state.pending["kind"] != "counter"):
                for viewer in [None, *range(players)]:
                    MESSAGES.view_to_any(state.view(viewer))
                for action in legal:
                    MESSAGES.action_to_any(state.action_detail(action))
            state.apply(seat, pick.choice(legal))
            step += 1


def test_short_configs_end_with_a_winner_or_the_cap():
    """G-5: a tiny cap stops every game as a draw; no game runs past it."""
    for seed in range(20):
        record = play_game(GAME, {"max_turns": 12}, 4, seed, ["random"] * 4, record_actions=False)
        assert record.turns <= 12 and (record.winners or record.capped)
