"""Crazy Cultists' action codes: `encode` is `decode`'s inverse on every action the rules
offer, no two actions share a code, and a code's family says what its label says.

Played over many random states (every player count, the Dark Powers and every variant), so
every family the rules build (plays at every seat, discards, choices, Hail Yourself's
takes, Toiling Trouble's pairs and the fixed answers) is met; a family that never showed
up fails the test rather than passing untested.
"""

from __future__ import annotations

import random

from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.cards import NUM_KINDS
from services.engines.crazy_cultists.rules import DISCARD, FIXED, NO_TARGET, decode, encode

CONFIGS = [
    {},
    {"dark_powers": True},
    {"dark_powers": True, "variant": "devilish"},
    {"dark_powers": True, "variant": "fiendish"},
    {"variant": "beast"},
]


def test_every_legal_action_of_many_random_states_round_trips() -> None:
    seen: set[str] = set()
    checked = 0
    for game in range(60):
        config = CONFIGS[game % len(CONFIGS)]
        players = 3 + game % 4
        pick = random.Random(game)
        state = GAME.new_state(config, players, game)
        while not state.is_terminal():
            for seat in state.to_act():
                legal = state.legal_actions(seat)
                assert len(set(legal)) == len(legal), "two legal actions share a code"
                for action in legal:
                    family, kind, target = decode(action)
                    assert family != "unknown", action
                    assert encode(family, kind, target) == action, (action, family, kind, target)
                    seen.add(family)
                    checked += 1
            seat = state.to_act()[0]
            state.apply(seat, pick.choice(state.legal_actions(seat)))
    fixed = {name for name, _ in FIXED.values()}
    assert seen >= {"play", "discard", "choose", "take", "pair"} | (fixed - {"take_nothing"}), seen ^ fixed
    assert checked > 10_000


def test_the_families_hold_every_kind_and_seat_apart() -> None:
    """Every (family, kind, seat) the rules could build has a code of its own."""
    codes = [encode("play", k, s) for k in range(NUM_KINDS) for s in [*range(NO_TARGET), -1]]
    codes += [encode(f, k) for f in ("discard", "choose") for k in range(NUM_KINDS)]
    codes += [encode("take", k, s) for k in range(NUM_KINDS) for s in range(NO_TARGET)]
    codes += [encode("pair", i, j) for j in range(1, 40) for i in range(j)]
    codes += list(FIXED)
    assert len(set(codes)) == len(codes)
    assert max(encode("play", k, -1) for k in range(NUM_KINDS)) < DISCARD
    for code in codes:
        assert encode(*decode(code)) == code
    assert decode(encode("play", 3, -1)) == ("play", 3, -1)


def test_the_derived_codes_are_the_codes_stored_games_hold() -> None:
    """The bases come from ACTION_FAMILIES and the number of kinds; for the 27 printed kinds
    they give the codes every stored table, record and replay was made with (the golden games
    in tests/golden replay them), so no mapping of old codes is needed."""
    from services.engines.crazy_cultists import rules

    assert (rules.PLAY, rules.DISCARD, rules.CHOOSE, rules.TAKE, rules.PASS, rules.PAIR) == (
        0,
        200,
        300,
        400,
        600,
        1000,
    )
    assert [rules.FIXED[a][0] for a in range(600, 609)] == [
        "pass", "counter", "done", "take_dark", "draw_main", "swap_hands", "discard_hand", "leave_hand",
        "take_nothing",
    ]  # fmt: skip
    assert encode("play", 9, 2) == 65 and encode("play", 26, -1) == 188
    assert encode("take", 26, 5) == 586 and encode("pair", 0, 1) == 1000 and encode("pair", 2, 4) == 1008
