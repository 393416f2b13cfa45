"""Tricky Cultists's policy features: the trick in play as the seat sees it, nothing hidden.

The hashed view the first policy nets were trained on held the trick as a bag of cards: no
led suit, no telling the partner's card from an opponent's, so the net could not learn the
game's first question (does my partner already win this trick?) and lost about 87% of its
games to the heuristic. These tests fail on such an encoding.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.policy import PolicyBot, encoder_for, load_net
from services.engines.core.rng import Rng
from services.engines.observation import encode_view
from services.engines.registry import load_game
from services.engines.tricky_cultists import features as tf
from services.engines.tricky_cultists.rules import PLAYING

from .test_policy_bot import tiny_weights

GAME = "tricky_cultists"


def _positions(seed: int) -> list[tuple[object, int, int]]:
    """(state before the move, seat to move, the move) along one heuristic game."""
    spec = load_game(GAME)
    state = spec.new_state(None, 4, seed)
    bots = [make_bot(spec, "heuristic", seed * 7 + s) for s in range(4)]
    out = []
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        action = bots[seat].choose(state, seat, legal)
        out.append((state.clone(), seat, action))
        state.apply(seat, action)
    return out


def _block(active: list[int], start: int, length: int) -> list[int]:
    return sorted(i - start for i in active if start <= i < start + length)


def test_features_show_the_led_suit_who_played_each_card_and_who_is_winning() -> None:
    checked = 0
    for state, seat, action in _positions(3):
        st: object = state
        trick = st.trick  # type: ignore[attr-defined]
        if st.phase != PLAYING or not trick:  # type: ignore[attr-defined]
            continue
        active = tf.features(state, seat)  # type: ignore[arg-type]
        ranks = st.config.ranks  # type: ignore[attr-defined]
        assert _block(active, tf.LED, 5) == [trick[0] // ranks]
        leader = st.leader  # type: ignore[attr-defined]
        for i, card in enumerate(trick):
            rel = (leader + i - seat) % 4
            assert tf.TRICK_BY_SEAT + rel * 100 + card in active
        if len(trick) == 3:  # this seat plays the last card: if it does not win, the winner stays
            after = state.clone()  # type: ignore[attr-defined]
            after.apply(seat, action)
            if after.last_winner != seat:
                assert _block(active, tf.WINNING, 5) == [(after.last_winner - seat) % 4]
                checked += 1
    assert checked >= 5


def test_the_same_trick_from_two_seats_reads_as_theirs() -> None:
    """Partners see the partner's card at seat 2 whoever they are: seats count from the mover."""
    for state, seat, _ in _positions(5):
        st: object = state
        if st.phase == PLAYING and len(st.trick) == 2:  # type: ignore[attr-defined]
            leader = st.leader  # type: ignore[attr-defined]
            mover = tf.features(state, seat)  # type: ignore[arg-type]
            assert tf.TRICK_BY_SEAT + 2 * 100 + st.trick[0] in mover  # type: ignore[attr-defined]
            assert (leader + 2) % 4 == seat
            return
    raise AssertionError("no trick of two cards in the game")


def test_the_view_encoding_keeps_the_trick_in_play_order() -> None:
    """The research environments' observation tells a trick led in one suit from the same
    cards led in another (a bag of cards did not)."""
    for state, seat, _ in _positions(7):
        view = state.view(seat)  # type: ignore[attr-defined]
        if len(view["trick"]) >= 2 and view["trick"][0]["suit"] != view["trick"][1]["suit"]:
            swapped = {**view, "trick": [view["trick"][1], view["trick"][0], *view["trick"][2:]]}
            assert not np.array_equal(encode_view(view), encode_view(swapped))
            return
    raise AssertionError("no trick with two suits in the game")


def test_features_hold_nothing_the_seat_cannot_see() -> None:
    """Re-dealing every card and agenda the seat cannot see leaves its features unchanged."""
    rng = random.Random(11)
    for game_seed in (1, 2):
        for state, seat, _ in _positions(game_seed)[::5]:
            before = sorted(tf.features(state, seat))  # type: ignore[arg-type]
            other = state.clone()  # type: ignore[attr-defined]
            other.resample_hidden(seat, Rng(rng.randrange(1 << 30)))
            assert sorted(tf.features(other, seat)) == before
            assert max(before) < tf.SIZE and len(set(before)) == len(before)


@pytest.mark.parametrize("game", ["trash_cult", "tricky_cultists", "crazy_cultists"])
def test_the_sparse_first_layer_scores_as_the_full_product(game: str) -> None:
    """The bot adds the active inputs' rows and scores only the legal columns: the same
    numbers as the whole vector times the whole net."""
    spec = load_game(game)
    net = load_net(game)
    state = spec.new_state(None, spec.default_players, 4)
    bots = [make_bot(spec, "heuristic", s) for s in range(spec.default_players)]
    checked = 0
    while not state.is_terminal() and checked < 20:
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        cols = [net.column[a] for a in legal if a in net.column]
        if len(cols) > 1:
            idx, values = net.encoder.active(state, seat)
            full = net.scores(net.encoder.dense(state, seat))[cols]
            assert np.allclose(net.legal_scores(idx, values, cols), full, atol=1e-4)
            checked += 1
        state.apply(seat, bots[seat].choose(state, seat, legal))
    assert checked == 20


def test_a_weights_file_naming_an_encoding_the_game_lacks_is_refused(tmp_path: Path) -> None:
    bad = tiny_weights(tmp_path / "bad.npz", encoder=np.array("tricky_cultists"))
    with pytest.raises(BadConfig, match="trash_cult has no policy encoding 'tricky_cultists'"):
        PolicyBot(load_game("trash_cult"), weights=bad)
    with pytest.raises(BadConfig, match=f"take observations of 10 numbers .* has {tf.SIZE}"):
        PolicyBot(load_game(GAME), weights=bad)
    assert encoder_for(GAME).size == tf.SIZE  # a new net of this game is trained on its features


def test_purple_s_target_is_scored_by_its_seat_counted_from_the_mover() -> None:
    """By absolute seat, "give the left opponent a Suspicion" was a different output at every
    seat and the net chose no better than at random; counted from the mover it is one."""
    from services.engines.tricky_cultists.rules import GIVE, PURPLE, STRIDE

    seen = 0
    for game_seed in range(1, 6):
        for state, seat, _ in _positions(game_seed):
            if state.phase != PURPLE:  # type: ignore[attr-defined]
                continue
            legal = state.legal_actions(seat)  # type: ignore[attr-defined]
            mapped = [tf.relative_action(state, seat, a) for a in legal]
            assert len(set(mapped)) == len(legal)  # one output per move
            for a, m in zip(legal, mapped, strict=True):
                if a // STRIDE == GIVE:
                    assert m == GIVE * STRIDE + (a % STRIDE - seat) % 4
            seen += 1
    assert seen >= 3


_DIGEST = """
import hashlib, json
from services.engines.core.bots import make_bot
from services.engines.core.policy import load_net
from services.engines.registry import load_game
from services.engines.tricky_cultists import features as tf
spec = load_game("tricky_cultists")
column = load_net("tricky_cultists").column
digest, decisions = hashlib.sha256(), 0
for seed in range(1, 9):
    state = spec.new_state(None, 4, seed)
    bots = [make_bot(spec, "heuristic", seed * 7 + s) for s in range(4)]
    while not state.is_terminal():
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        for s in range(4):  # every seat's features, in the order the encoder lists them
            digest.update(json.dumps(tf.features(state, s)).encode())
        digest.update(json.dumps(tf.legal_columns(state, seat, legal, column)).encode())
        state.apply(seat, bots[seat].choose(state, seat, legal))
        decisions += 1
print(json.dumps({"file": tf.__file__, "digest": digest.hexdigest(), "decisions": decisions}))
"""


def _digest(pure: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    if pure:
        env["CULTISTS_PURE_PYTHON"] = "1"
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _DIGEST], cwd=root, env=env, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_compiled_features_and_columns_are_the_interpreted_ones_in_the_same_order() -> None:
    """features.pxd types the encoder in C; the indices, their order (the net sums its rows
    in it, so the order is part of the scores' rounding) and the legal moves' columns must
    be exactly the interpreted source's, or the policy would play other moves compiled."""
    compiled, interpreted = _digest(pure=False), _digest(pure=True)
    assert str(interpreted["file"]).endswith(".py")
    assert int(str(compiled["decisions"])) > 500
    assert compiled["digest"] == interpreted["digest"]


def test_legal_columns_maps_each_move_as_relative_action_does() -> None:
    net = load_net(GAME)
    column = dict(net.column)
    column.pop(next(iter(column)))  # a move the net has no column for is left out
    for game_seed in (1, 2):
        for state, seat, _ in _positions(game_seed):
            legal = state.legal_actions(seat)  # type: ignore[attr-defined]
            want = [(a, column[m]) for a in legal if (m := tf.relative_action(state, seat, a)) in column]
            known, cols = tf.legal_columns(state, seat, legal, column)
            assert list(zip(known, cols, strict=True)) == want
    with pytest.raises(TypeError):
        tf.features(None, 0)
