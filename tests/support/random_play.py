"""The random-play checker every game's simulation test runs (after OpenSpiel's test helper).

At every step: a non-terminal state names a deciding seat with at least one legal action;
the game's own invariants hold (card conservation and the like); JSON and bytes round
trips restore an equal state; clones are equal and independent. At the end: the same seed
and actions replay to the same final state, and (sampled) the deciding seat's view does not
change when the cards it cannot see are re-dealt.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from services.engines.core.game import GameSpec, State
from services.engines.core.play import replay
from services.engines.core.rng import Rng
from services.engines.core.serial import state_from_bytes, state_to_bytes


def check_random_games(
    spec: GameSpec,
    players: int,
    games: int,
    seed: int = 0,
    config: dict[str, Any] | None = None,
    roundtrip_every: int = 1,
    leak_every: int = 7,
    extra: Callable[[State], None] | None = None,
) -> list[State]:
    """Play `games` random games, checking every step; returns the final states."""
    finals = []
    for g in range(games):
        game_seed = seed + g
        pick = random.Random(game_seed)
        state = spec.new_state(config, players, game_seed)
        actions: list[tuple[int, int]] = []
        step = 0
        while not state.is_terminal():
            to_act = list(state.to_act())
            assert to_act, f"non-terminal state with nobody to act (seed {game_seed}, step {step})"
            for s in to_act:
                assert state.legal_actions(s), f"seat {s} asked to act with no legal action"
            state.check_invariants()
            if extra is not None:
                extra(state)
            if step % roundtrip_every == 0:
                restored = state_from_bytes(state_to_bytes(state))
                assert restored == state, f"bytes round trip changed the state (seed {game_seed})"
                assert spec.state_class.from_json(state.to_json()) == state
            if step % leak_every == 0:
                _check_no_leak(state, to_act[0], game_seed * 1000 + step)
            seat = to_act[0]
            action = pick.choice(state.legal_actions(seat))
            if step % 50 == 0:
                before = state.to_json()
                twin = state.clone()
                assert twin == state
                twin.apply(seat, action)
                assert state.to_json() == before, "a clone shares mutable data with its original"
            state.apply(seat, action)
            actions.append((seat, action))
            step += 1
        assert not list(state.to_act()), "a terminal state still asks someone to act"
        again = replay(spec, config, players, game_seed, actions)
        assert again == state, f"replay of seed {game_seed} diverged"
        finals.append(state)
    return finals


def _check_no_leak(state: State, seat: int, salt: int) -> None:
    before = state.view(seat)
    twin = state.clone()
    twin.resample_hidden(seat, Rng(salt))
    twin.check_invariants()
    assert twin.view(seat) == before, "a seat's view changed when hidden cards were re-dealt"
    assert twin.legal_actions(seat) == state.legal_actions(seat) or _same_labels(state, twin, seat)


def _same_labels(a: State, b: State, seat: int) -> bool:
    return sorted(a.action_label(x) for x in a.legal_actions(seat)) == sorted(
        b.action_label(x) for x in b.legal_actions(seat)
    )
