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


def test_train_with_a_student_labels_the_positions_the_student_reaches(tmp_path: Path) -> None:
    """DAgger: games where a student net plays half the moves are still labelled with the
    teacher's move at every decision, on the game's own policy features (Tricky Cultists)."""
    from services.cli.train_cmd import examples
    from services.engines.action_space import ActionTable
    from services.engines.tricky_cultists import features

    ckpt, student = tmp_path / "tk.pkl", tmp_path / "tk0.npz"
    common = ["train", "tricky_cultists", "--chunk", "1", "--epochs", "1", "--hidden", "8"]
    assert main([*common, "--games", "1", "--checkpoint", str(ckpt), "--out", str(student)]) == 0
    spec = load_game("tricky_cultists")
    table = ActionTable("tricky_cultists", spec.make_config(), 4)
    xs, ys, legals = examples("tricky_cultists", "heuristic", 5, table, 4, None, student)
    plain, _, _ = examples("tricky_cultists", "heuristic", 5, table, 4, None, None)
    assert xs[0].shape == (features.SIZE,) and all(y in legal for y, legal in zip(ys, legals, strict=True))
    assert len(xs) != len(plain) or any((a != b).any() for a, b in zip(xs, plain, strict=True))
    out = tmp_path / "tk1.npz"
    dagger = ["--games", "2", "--checkpoint", str(tmp_path / "d.pkl"), "--student", str(student)]
    assert main([*common, *dagger, "--out", str(out)]) == 0
    bot = PolicyBot(spec, seed=1, weights=out)
    state = spec.new_state(None, 4, 2)
    seat = state.to_act()[0]
    assert bot.choose(state, seat, state.legal_actions(seat)) in state.legal_actions(seat)


def test_train_from_a_weights_file_starts_where_that_net_plays(tmp_path: Path) -> None:
    """`--init`: a stronger teacher's labels refine a shipped net rather than a random one;
    with no epochs the exported net is the file's (the same scores for every legal move)."""
    import numpy as np

    from services.engines.core.policy import load_net

    shipped = Path("services/engines/weights/trash_cult.npz")
    ckpt, out = tmp_path / "tc.pkl", tmp_path / "tc.npz"
    args = ["train", "trash_cult", "--players", "2", "--games", "1", "--checkpoint", str(ckpt)]
    assert main([*args, "--init", str(shipped), "--epochs", "1", "--lr", "1e-12", "--out", str(out)]) == 0
    before, after = load_net("trash_cult", shipped), load_net("trash_cult", out)
    spec = load_game("trash_cult")
    state = spec.new_state(None, 2, 9)
    checked = 0
    bot = PolicyBot(spec, seed=1, weights=out)
    while not state.is_terminal() and checked < 10:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        cols = [a for a in legal if a in before.column and a in after.column]
        if len(cols) > 1:
            obs = before.encoder.dense(state, seat)
            old = before.scores(obs)[[before.column[a] for a in cols]]
            new = after.scores(obs)[[after.column[a] for a in cols]]
            assert np.allclose(old, new, atol=1e-3)
            checked += 1
        state.apply(seat, bot.choose(state, seat, legal), legal)
    assert checked == 10
