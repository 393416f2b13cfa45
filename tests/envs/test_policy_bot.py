"""The `policy` bot: shipped weights load, only legal moves, replays for a seed, and a
weights file that does not fit the game is refused in words."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.engines.core.bots import bot_names, make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.policy import PolicyBot, weights_path
from services.engines.registry import load_game

GAMES = ["trash_cult", "tricky_cultists", "crazy_cultists"]


@pytest.mark.parametrize("game", GAMES)
def test_policy_bot_plays_only_legal_moves_and_replays_for_a_seed(game: str) -> None:
    spec = load_game(game)
    assert "policy" in bot_names(spec)
    assert weights_path(game).stat().st_size <= 2_000_000
    players = spec.default_players
    first = _play(spec, players, 11)
    assert first == _play(spec, players, 11) and len(first) > players


def _play(spec, players: int, seed: int) -> list[int]:
    """A whole game of policy bots, every pick checked against the legal list."""
    bots = [make_bot(spec, "policy", seed * 10 + s) for s in range(players)]
    state = spec.new_state(None, players, seed)
    actions = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal)
        assert action in legal, (action, legal)
        state.apply(seat, action)
        actions.append(action)
    return actions


def test_policy_takes_no_file_from_a_bot_spec() -> None:
    with pytest.raises(BadConfig, match="has no parameter"):
        make_bot(load_game("trash_cult"), "policy:weights=/etc/passwd")


def tiny_weights(path: Path, **extra: np.ndarray) -> Path:
    """A one-layer net over 10 inputs and 3 actions: the wrong shape for every game."""
    np.savez(
        path,
        w0=np.zeros((10, 3), np.float32),
        b0=np.zeros(3, np.float32),
        actions=np.array([0, 1, 2]),
        obs_size=np.array(10),
        **extra,
    )
    return path


def test_weights_of_the_wrong_observation_size_are_refused(tmp_path: Path) -> None:
    bad = tiny_weights(tmp_path / "bad.npz")
    with pytest.raises(BadConfig, match=r"take observations of 10 numbers .* has 1024"):
        PolicyBot(load_game("trash_cult"), weights=bad)
    with pytest.raises(BadConfig, match="not found"):
        PolicyBot(load_game("trash_cult"), weights=tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(BadConfig, match="unreadable"):
        PolicyBot(load_game("trash_cult"), weights=tmp_path / "junk.npz")
