"""Random games with every step checked: conservation, Suspicion, scores, round trips, replay,
protobuf messages and hidden information (G-2, G-3)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.engines.core.config import config_to_dict
from services.engines.core.play import play_game
from services.engines.core.serial import state_to_bytes
from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.proto import MESSAGES
from services.engines.tricky_cultists.rules import TrickyCultistsState
from tests.support.random_play import check_random_games

CONFIGS = {
    "book": None,
    "two copies of each agenda": {"agenda_copies": 2, "draft_size": 8},  # TK-5 ties happen
    "short rounds, cards left undealt": {"hand_size": 6, "codex_size": 2, "rounds": 2},
    "two suits": {"suits": ["Red", "Purple"], "hand_size": 4, "codex_size": 2},
    "turn cap": {"max_turns": 12},
}
GAMES = {"book": 60}


def card_ids(node: Any) -> set[int]:
    """Every card id in a view: cards are the dicts with an id and a suit."""
    found: set[int] = set()
    if isinstance(node, dict):
        if "id" in node and "suit" in node:
            found.add(node["id"])
        for value in node.values():
            found |= card_ids(value)
    elif isinstance(node, list):
        for value in node:
            found |= card_ids(value)
    return found


def check_step(state: TrickyCultistsState) -> None:
    cfg, n = state.config, state.num_players
    zones = [*state.hands, *state.codex, *state.won, state.trick, state.undealt]
    assert sorted(c for z in zones for c in z) == list(range(cfg.cards)), "every card exactly once"
    assert all(s >= 0 for s in state.suspicion), "Suspicion is never negative"
    totals = state.totals()
    assert state.team_totals() == [totals[0] + totals[2], totals[1] + totals[3]]
    if state.phase == "draft" and state.actor == state.start and state.round > 0:
        # Nobody has drafted yet: Suspicion is what the last round's step 5 charged for.
        penalty = [part[3] for part in state.breakdown[-1]]
        assert penalty == [-cfg.suspicion_penalty * s for s in state.suspicion]
    if state.decisions % 5:
        return
    for viewer in (None, *range(n)):
        view = state.view(viewer)
        MESSAGES.view_to_any(view)
        hidden = {c for s in range(n) if s != viewer for c in state.hands[s] + state.codex[s]}
        assert not card_ids(view) & (hidden | set(state.undealt)), "a view shows a hidden card"
        for s, seat in enumerate(view["seats"]):
            assert seat["score"] == totals[s]
            if state.phase == "draft" and s != viewer:
                assert seat["agenda"] == "", "an unrevealed agenda shows"
        if view["pack"]:
            assert viewer == state.actor and state.phase == "draft"
    for action in state.legal_actions(state.actor):
        MESSAGES.action_to_any(state.action_detail(action))
    labels = [state.action_label(a) for a in state.legal_actions(state.actor)]
    assert len(set(labels)) == len(labels), "two legal actions share a label"


def check_final(state: TrickyCultistsState) -> None:
    """The last round's parts match the stacks still on the table at the end."""
    cfg, n = state.config, state.num_players
    if state.capped:
        return
    for s, part in enumerate(state.breakdown[-1]):
        tops = state.won[s][::n]
        assert part[1] == sum(cfg.card_values[t] for t in tops)
        bonus = sum(1 for t in tops if t // cfg.ranks == state.bonus) if state.bonus >= 0 else 0
        assert part[2] == cfg.bonus_per_trick * bonus
        assert part[3] == -cfg.suspicion_penalty * state.suspicion[s]
        kind = state.agendas[s] % 8 if state.agendas[s] >= 0 else None
        allowed = {0, *cfg.agenda_points[kind]} if kind is not None else {0}
        assert part[0] in allowed


@pytest.mark.parametrize("name", list(CONFIGS))
def test_random_games_keep_every_invariant(name):
    """52 cards once, Suspicion >= 0, scores from parts, round trips, replay, no leaks (G-2, G-3)."""
    finals = check_random_games(
        GAME,
        4,
        GAMES.get(name, 25),
        seed=1000,
        config=CONFIGS[name],
        roundtrip_every=4,
        leak_every=9,
        extra=check_step,
    )
    for state in finals:
        assert state.is_terminal()
        check_final(state)
        assert sum(state.returns()) == 2.0  # partners share: 1 + 1, or 0.5 x 4
        assert len(state_to_bytes(state)) <= 4096
    if name == "turn cap":
        assert all(s.capped and s.winners() == [] for s in finals)
    else:
        assert not any(s.capped for s in finals)


def test_many_fast_random_games_end_consistently():
    """Hundreds of unchecked random games (the fast path sweeps use) end in a valid, scored state."""
    pick = random.Random(5)
    for seed in range(400):
        state = GAME.new_state(None, 4, seed)
        while not state.is_terminal():
            seat = state.actor
            state._apply(seat, pick.choice(state.legal_actions(seat)))
        state.check_invariants()
        check_final(state)
        assert len(state.breakdown) == state.config.rounds


def test_same_seed_same_game():
    """G-2: the same seed and bots give the same actions and the same final state."""
    first = play_game(GAME, None, 4, 77, ["random"] * 4)
    second = play_game(GAME, None, 4, 77, ["random"] * 4)
    assert first.actions == second.actions and first.returns == second.returns
    assert play_game(GAME, None, 4, 78, ["random"] * 4).actions != first.actions


def test_serialised_state_stays_under_4kb():
    largest = 0
    for seed in range(30):
        state = GAME.new_state(None, 4, seed)
        record = play_game(GAME, None, 4, seed, ["random"] * 4)
        for seat, action in record.actions:
            state.apply(seat, action)
            largest = max(largest, len(state_to_bytes(state)))
    assert largest <= 4096


@pytest.mark.parametrize(
    "values", [{}, {"ranks": 12, "hand_size": 9, "no_tricks_failure": -3}, {"suits": "Red,Blue"}]
)
def test_config_round_trips_through_protobuf(values):
    config = GAME.make_config({**values, "hand_size": 4, "codex_size": 2} if "suits" in values else values)
    packed = MESSAGES.config_to_any(config_to_dict(config))
    assert GAME.make_config(MESSAGES.config_from_any(packed)) == config


def test_unset_protobuf_config_fields_keep_defaults():
    packed = MESSAGES.config_to_any({"rounds": 2})
    assert MESSAGES.config_from_any(packed) == {"rounds": 2}
    assert GAME.make_config(MESSAGES.config_from_any(packed)).hand_size == 10
