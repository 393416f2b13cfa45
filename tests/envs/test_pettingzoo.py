"""The games as PettingZoo/Gymnasium environments: the libraries' own checkers, the seat's
redacted view only, and refusals in words."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from services.engines.core.rng import Rng
from services.engines.observation import encode_view
from services.envs import pettingzoo_env, single_agent

# Every player count each game's engine accepts, plus a variant config where the game has one.
SETUPS = [
    ("trash_cult", 2, None),
    ("trash_cult", 3, None),
    ("trash_cult", 4, None),
    ("tricky_cultists", 4, None),
    *[("crazy_cultists", n, None) for n in range(3, 7)],
    ("crazy_cultists", 2, {"two_players": True}),  # CC-2's two-seat variant
    ("crazy_cultists", 4, {"dark_powers": True}),  # CC-10: Dark Powers draws and actions
    ("crazy_cultists", 5, {"variant": "beast"}),  # CC-9
]


@pytest.mark.parametrize(("game", "players", "config"), SETUPS)
def test_pettingzoo_api_and_seed_tests_pass(game: str, players: int, config: dict | None) -> None:
    api_test(pettingzoo_env(game, players=players, config=config, seed=1), num_cycles=200)
    seed_test(lambda: pettingzoo_env(game, players=players, config=config), num_cycles=50)


def _play_random(env, seed: int, steps: int):
    """Yield the env after each random legal step."""
    env.reset(seed=seed)
    pick = random.Random(seed)
    for _ in range(steps):
        agent = env.agent_selection
        obs, _r, term, trunc, _ = env.last()
        if term or trunc:
            return
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal), f"{agent} asked with an empty mask"
        env.step(int(pick.choice(list(legal))))
        yield env


@pytest.mark.parametrize("game", ["trash_cult", "tricky_cultists", "crazy_cultists"])
def test_observation_holds_nothing_other_seats_hide(game: str) -> None:
    """The leak test's check (tests/support/random_play.py) over the encoded observations:
    re-dealing every card seat i cannot see leaves seat i's observation exactly as it was."""
    checked = 0
    for step, env in enumerate(_play_random(pettingzoo_env(game, seed=3), 3, 400)):
        if step % 5:
            continue
        for seat in range(len(env.possible_agents)):
            before = encode_view(env.state.view(seat))
            twin = env.state.clone()
            twin.resample_hidden(seat, Rng(step * 10 + seat))
            assert np.array_equal(encode_view(twin.view(seat)), before), (game, step, seat)
            checked += 1
    assert checked > 20


def test_encoding_differs_when_the_hand_does() -> None:
    """The check above could not fail if the vector ignored the view: a seat's own hand,
    and another seat's public hand size, each change it."""
    env = pettingzoo_env("trash_cult", players=3, seed=5)
    env.reset(seed=5)
    while not env.state.view(0)["hand"]:  # the cults are picked before the deal (TC-2)
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    view = env.state.view(0)
    base = encode_view(view)
    assert not np.array_equal(base, encode_view({**view, "hand": view["hand"][1:]}))
    seats = [dict(s) for s in view["seats"]]
    seats[1]["hand_size"] += 1
    assert not np.array_equal(base, encode_view({**view, "seats": seats}))


def test_reactions_are_turns_of_the_seat_asked() -> None:
    """Whenever the engine asks a seat out of turn, that seat is the agent selected."""
    seen_out_of_turn = 0
    for seed in range(6):
        for env in _play_random(pettingzoo_env("trash_cult", players=4, seed=seed), seed, 2000):
            if env.state.is_terminal():
                break
            asked = env.state.to_act()[0]
            assert env.agent_selection == f"player_{asked}"
            view = env.state.view(asked)
            if view.get("active") is not None and view["active"] != asked:
                seen_out_of_turn += 1
    assert seen_out_of_turn > 0


def test_an_action_outside_the_mask_is_refused_in_words() -> None:
    env = pettingzoo_env("crazy_cultists", players=4, seed=2)
    env.reset(seed=2)
    mask = env.observe(env.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    before = env.state.to_json()
    with pytest.raises(ValueError, match=r"not in player_\d's action mask"):
        env.step(bad)
    with pytest.raises(ValueError, match="outside 0"):
        env.step(len(mask))
    assert env.state.to_json() == before


def test_a_refused_config_or_count_names_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"takes 4-4 players"):
        pettingzoo_env("tricky_cultists", players=3)
    with pytest.raises(ValueError, match=r"takes 3-6 players with this config, not 2"):
        pettingzoo_env("crazy_cultists", players=2)
    with pytest.raises(ValueError, match=r"config refused: .*no_such_field"):
        pettingzoo_env("trash_cult", config={"no_such_field": 1})
    with pytest.raises(ValueError, match="unknown game"):
        pettingzoo_env("chess")


@pytest.mark.parametrize("game", ["trash_cult", "tricky_cultists", "crazy_cultists"])
def test_single_agent_env_passes_gymnasium_checker(game: str) -> None:
    env = single_agent(game, seat=1, opponents="heuristic", seed=4)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=9)
    total, done = 0.0, False
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, done, _trunc, _ = env.step(int(legal[0]))
        total += reward
    assert 0.0 <= total <= 1.0


def test_single_agent_masked_off_action_loses_or_raises_never_plays_another() -> None:
    env = single_agent("trash_cult", seat=0, opponents="random", players=3, seed=1)
    obs, _ = env.reset(seed=1)
    bad = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    before = env.aec.state.to_json()
    _obs, reward, done, _trunc, info = env.step(bad)
    assert (reward, done) == (-1.0, True) and "not in player_0's action mask" in info["illegal_action"]
    assert env.aec.state.to_json() == before
    with pytest.raises(ValueError, match="call reset"):
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    strict = single_agent("trash_cult", seat=0, opponents="random", players=3, seed=1, illegal="raise")
    obs, _ = strict.reset(seed=1)
    with pytest.raises(ValueError, match="action mask"):
        strict.step(bad)
    with pytest.raises(ValueError, match="unknown bot 'nobody'"):
        single_agent("trash_cult", opponents="nobody")
