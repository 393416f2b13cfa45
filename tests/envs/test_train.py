"""`cultists train`: checkpoints after each chunk, resumes from one, writes loadable weights."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from services.cli.main import main
from services.engines.core.policy import PolicyBot
from services.engines.registry import load_game


def test_train_resumes_from_its_checkpoint_and_writes_weights_the_bot_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt, out = tmp_path / "tc.pkl", tmp_path / "tc.npz"
    common = ["train", "trash_cult", "--chunk", "1", "--checkpoint", str(ckpt), "--out", str(out)]
    assert main([*common, "--games", "2", "--epochs", "2"]) == 0
    first = pickle.loads(ckpt.read_bytes())
    assert first["games_done"] == 2 and first["epochs_done"] == 2 and first["chunks"] == [0, 1]
    steps = first["net"].steps  # optimiser steps taken so far
    assert main([*common, "--games", "3", "--epochs", "2"]) == 0  # a restart: plays only the third game
    second = pickle.loads(ckpt.read_bytes())
    assert second["games_done"] == 3 and second["chunks"] == [0, 1, 2] and second["net"].steps > steps
    steps = second["net"].steps
    assert main([*common, "--games", "3", "--epochs", "3"]) == 0  # no new games: one more epoch only
    third = pickle.loads(ckpt.read_bytes())
    assert third["epochs_done"] == 3 and third["net"].steps > steps
    spec = load_game("trash_cult")
    bot = PolicyBot(spec, seed=1, weights=out)
    state = spec.new_state(None, 3, 2)
    seat = state.to_act()[0]
    legal = state.legal_actions(seat)
    assert bot.choose(state, seat, legal) in legal
    capsys.readouterr()
    assert (
        main(["train", "trash_cult", "--teacher", "nobody", "--checkpoint", str(ckpt)]) == 2
    )  # a refused input (docs/cli.md, exit status)
    assert "unknown bot 'nobody'" in capsys.readouterr().err
    assert pickle.loads(ckpt.read_bytes())["games_done"] == 3  # the refusal changed nothing


def test_train_refuses_a_seat_count_the_game_does_not_seat(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = tmp_path / "tc.pkl"
    assert main(["train", "trash_cult", "--players", "99", "--checkpoint", str(ckpt)]) == 2
    assert "--players 99" in capsys.readouterr().err
    assert not ckpt.exists()  # the refusal changed nothing


def test_train_refuses_a_table_the_rules_refuse_before_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ckpt = tmp_path / "cc.pkl"
    # CC-2: two seats only with the sweep variant switched on
    assert main(["train", "crazy_cultists", "--players", "2", "--checkpoint", str(ckpt)]) == 2
    assert "two_players" in capsys.readouterr().err
    assert not ckpt.exists()
