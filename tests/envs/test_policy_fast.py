"""The `policy` bot's compiled decision (both layers in one loop, `_sparse_scores`) plays
exactly the moves of numpy's path, the decision as it was before the loop: same scores up
to float32 rounding, the same picks and the same draws of the tie-break generator, over
thousands of positions of every game, in policy self-play and along heuristic games."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from services.engines.core import policy
from services.engines.core.bots import make_bot
from services.engines.core.policy import PolicyBot, PolicyNet, load_net
from services.engines.registry import load_game

# Per game: the table sizes played, and the config of each (Crazy Cultists's 2-seat variant).
TABLES: dict[str, list[tuple[int, dict[str, Any] | None]]] = {
    "trash_cult": [(2, None), (3, None), (4, None)],
    "crazy_cultists": [(2, {"two_players": True}), (4, None)],
    "tricky_cultists": [(4, None)],
}


def _numpy_choice(net: PolicyNet, rng: random.Random, state: Any, seat: int, legal: list[int]) -> int:
    """The decision as PolicyBot.choose made it before the compiled loop: the encoder's
    arrays, numpy's gather and products, the same tie-break."""
    if len(legal) == 1:
        return legal[0]
    encoder = net.encoder
    known, cols = [], []
    for a in legal:
        c = net.column.get(encoder.relative(state, seat, a) if encoder.relative else a)
        if c is not None:
            known.append(a)
            cols.append(c)
    if not known:
        return rng.choice(legal)
    idx, values = net.with_on(*encoder.active(state, seat))
    scores = net.numpy_scores_on(idx, values, cols).tolist()
    best = max(scores)
    picks = [a for a, s in zip(known, scores, strict=True) if s == best]
    return picks[0] if len(picks) == 1 else rng.choice(picks)


@pytest.mark.parametrize("game", list(TABLES))
def test_the_compiled_decision_plays_numpy_s_moves(game: str) -> None:
    spec = load_game(game)
    net = load_net(game)
    assert net.fast == policy._COMPILED  # compiled, the bot takes the loop (else numpy's path)
    decisions = 0
    for players, config in TABLES[game]:
        for seed in range(12 if game != "tricky_cultists" else 8):
            for driver in ("policy", "heuristic"):
                bots = [PolicyBot(spec, seed * 10 + s) for s in range(players)]
                refs = [random.Random(seed * 10 + s) for s in range(players)]
                movers = [make_bot(spec, "heuristic", seed * 10 + s) for s in range(players)]
                state = spec.new_state(config, players, 900 + seed)
                while not state.is_terminal():
                    seat = state.to_act()[0]
                    legal = state.legal_actions(seat)
                    picked = bots[seat].choose(state, seat, legal)
                    assert picked == _numpy_choice(net, refs[seat], state, seat, legal), (seed, players)
                    decisions += len(legal) > 1
                    move = picked if driver == "policy" else movers[seat].choose(state, seat, legal)
                    state.apply(seat, move)
                for bot, ref in zip(bots, refs, strict=True):
                    assert bot.rng.getstate() == ref.getstate()  # the same tie-break draws
    assert decisions >= 2000


@pytest.mark.parametrize("game", list(TABLES))
def test_the_loop_scores_as_numpy_does(game: str) -> None:
    """The loop's scores (compiled here, or interpreted: the same arithmetic) against
    numpy's over many positions: equal up to float32 rounding."""
    spec = load_game(game)
    net = load_net(game)
    players, config = TABLES[game][0]
    bots = [make_bot(spec, "heuristic", s) for s in range(players)]
    checked = 0
    for seed in range(40):
        state = spec.new_state(config, players, 50 + seed)
        while not state.is_terminal() and checked < 300:
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            cols = list(range(min(len(net.actions), 100)))  # many columns, not only the legal ones
            idx, values = net.with_on(*net.encoder.active(state, seat))
            want = net.numpy_scores_on(idx, values, cols)
            got = net.sparse_scores(idx.tolist(), None if values is None else values.tolist(), cols)
            assert np.allclose(got, want, rtol=1e-5, atol=1e-5)
            checked += 1
            state.apply(seat, bots[seat].choose(state, seat, legal))
    assert checked >= 300


def test_the_loop_refuses_inputs_and_columns_the_net_lacks() -> None:
    net = load_net("trash_cult")
    with pytest.raises(IndexError, match="input 5000 is not one of the net's 1025"):
        net.sparse_scores([3, 5000, net.on], None, [0])
    with pytest.raises(IndexError, match="input -1"):
        net.sparse_scores([-1, net.on], None, [0])
    with pytest.raises(IndexError, match="column 83 is not one of the net's 83"):
        net.sparse_scores([3, net.on], None, [0, 83])
    with pytest.raises(ValueError, match="1 values for 2 inputs"):
        net.sparse_scores([3, net.on], [1.0], [0])
    assert net.sparse_scores([net.on], None, []) == []
