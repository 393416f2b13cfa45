"""Trash Cult's and Crazy Cultists's `features.observation`: the environments' observation
vector, built straight from the state for the `policy` bot (no view dict, no path hashing
per leaf). A weights file trained on the view must score exactly as before, so the two
vectors must be equal at every seat of every state: these tests play random and heuristic
games at every seat count and config the environments test, and compare."""

from __future__ import annotations

import random

import numpy as np
import pytest

from services.engines.core.bots import make_bot
from services.engines.core.policy import VIEW, PolicyBot, encoder_for, encodings
from services.engines.core.rng import Rng
from services.engines.observation import OBS_SIZE, encode_view
from services.engines.registry import load_game, load_part

SETUPS = [
    ("trash_cult", 2, None),
    ("trash_cult", 3, None),
    ("trash_cult", 4, None),
    *[("crazy_cultists", n, None) for n in range(3, 7)],
    ("crazy_cultists", 2, {"two_players": True}),
    ("crazy_cultists", 4, {"dark_powers": True}),
    ("crazy_cultists", 5, {"variant": "beast"}),
]


def _dense(game: str, state: object, seat: int) -> np.ndarray:
    idx, values = load_part(game, "features").observation(state, seat)
    assert len(idx) == len(values) and all(0 <= i < OBS_SIZE for i in idx)
    out = np.zeros(OBS_SIZE, dtype=np.float32)
    np.add.at(out, idx, values)  # a slot named twice holds the sum, as the view's `+=`
    return out


def _states(game: str, players: int, config: dict | None, games: int):
    """Every state along `games` games, half of them random play, half heuristic."""
    spec = load_game(game)
    for g in range(games):
        state = spec.new_state(spec.make_config(dict(config or {})), players, 100 + g)
        pick = random.Random(g)
        bots = [make_bot(spec, "heuristic", g * 11 + s) for s in range(players)] if g % 2 else None
        while True:
            yield state
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            action = bots[seat].choose(state, seat, legal) if bots else pick.choice(legal)
            state.apply(seat, action, legal)


@pytest.mark.parametrize(("game", "players", "config"), SETUPS)
def test_the_features_vector_is_the_environments_observation(
    game: str, players: int, config: dict | None
) -> None:
    checked = 0
    pending = 0
    for state in _states(game, players, config, 6):
        pending += state.pending is not None  # type: ignore[attr-defined]
        for seat in range(players):
            expected = encode_view(state.view(seat))  # type: ignore[attr-defined]
            got = _dense(game, state, seat)
            assert np.array_equal(got, expected), (game, players, seat, np.flatnonzero(got != expected))
            checked += 1
    assert checked > 500 and pending > 10


@pytest.mark.parametrize("game", ["trash_cult", "crazy_cultists"])
def test_the_features_hold_nothing_the_seat_cannot_see(game: str) -> None:
    """The leak test's check on the fast path: re-dealing what seat i cannot see leaves
    its features exactly as they were."""
    players = load_game(game).default_players
    checked = 0
    for step, state in enumerate(_states(game, players, None, 2)):
        if step % 4:
            continue
        for seat in range(players):
            twin = state.clone()  # type: ignore[attr-defined]
            twin.resample_hidden(seat, Rng(step * 10 + seat))
            assert np.array_equal(_dense(game, twin, seat), _dense(game, state, seat)), (step, seat)
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("game", ["trash_cult", "crazy_cultists"])
def test_the_policy_reads_the_fast_observation_and_plays_as_on_the_view(game: str) -> None:
    """The shipped weights (trained on the view) take the fast path, and choose the same
    moves as the same net fed `encode_view(view)`."""
    assert encodings(game) == [VIEW]
    encoder = encoder_for(game)
    assert encoder.observation is not None
    spec = load_game(game)
    fast = PolicyBot(spec, seed=1)
    slow = PolicyBot(spec, seed=1)
    slow.encoder = type(encoder)(game, VIEW)
    slow.encoder.observation = None
    compared = 0
    for state in _states(game, spec.default_players, None, 2):
        if state.is_terminal():
            continue
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        if len(legal) > 1:
            assert fast.choose(state, seat, legal) == slow.choose(state, seat, legal)
            compared += 1
    assert compared > 50
