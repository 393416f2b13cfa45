"""IS-MCTS: legal, blind to hidden cards, reproducible, and sound in its determinisation."""

from __future__ import annotations

from typing import Any

import pytest

from services.engines.core.bots import make_bot
from services.engines.core.errors import BadConfig
from services.engines.core.game import State
from services.engines.core.ismcts import canonical
from services.engines.core.play import play_game
from services.engines.core.rng import Rng

from .support import SMALL, TABLES, decision_points, spec_of


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_ismcts_only_picks_legal_actions(game, players):
    spec = spec_of(game)
    for i, state in enumerate(decision_points(spec, players, seed=11, count=14)):
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        before = state.to_json()
        choice = make_bot(spec, SMALL, i).choose(state, seat, legal)
        assert choice in legal
        assert state.to_json() == before, "the search must not touch the position it is given"


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_choice_is_unchanged_when_hidden_cards_are_redealt(game, players):
    """Never reads hidden cards: re-deal everything the seat cannot see (other hands, deck
    and chaos order, unseen agendas), ask again with the same seed, get the same move."""
    spec = spec_of(game)
    for i, state in enumerate(decision_points(spec, players, seed=23, count=8)):
        seat = state.to_act()[0]
        legal = state.legal_actions(seat)
        first = make_bot(spec, SMALL, 100 + i).choose(state, seat, legal)
        for salt in (1, 2):
            other = state.clone()
            other.resample_hidden(seat, Rng(9_000 + 31 * i + salt))
            assert other.view(seat) == state.view(seat)
            again = make_bot(spec, SMALL, 100 + i).choose(other, seat, other.legal_actions(seat))
            assert again == first, f"{game} position {i}: the hidden cards changed the choice"


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_determinisations_depend_only_on_the_information_set(game, players):
    """What the search plays on is the same whichever way the hidden cards really lie: the
    canonical copy, re-dealt with one generator, gives one position from either deal."""
    spec = spec_of(game)
    for i, state in enumerate(decision_points(spec, players, seed=37, count=10)):
        seat = state.to_act()[0]
        other = state.clone()
        other.resample_hidden(seat, Rng(77 + i))
        mine, theirs = canonical(state, seat), canonical(other, seat)
        assert mine.view(seat) == state.view(seat)
        for salt in range(3):
            mine_dealt, theirs_dealt = mine.clone(), theirs.clone()
            mine_dealt.resample_hidden(seat, Rng(salt))
            theirs_dealt.resample_hidden(seat, Rng(salt))
            assert mine_dealt.to_json() == theirs_dealt.to_json()


def _shape(value: Any) -> Any:
    """Zone sizes of a JSON-shaped field: lists become their lengths (nested per zone)."""
    if type(value) is list:
        if value and type(value[0]) in (list, dict):
            return [_shape(v) for v in value]
        return len(value)
    if type(value) is dict:
        return {k: _shape(v) for k, v in value.items()}
    return None


def _hidden_fields(state: State) -> dict[str, Any]:
    return {name: _shape(getattr(state, name)) for name in state.FIELDS}


@pytest.mark.parametrize(("game", "players"), TABLES)
def test_determinisation_keeps_counts_and_public_facts(game, players):
    """`resample_hidden` for every observer: its view and the spectator's are unchanged,
    every zone keeps its size, cards are conserved (the game's own invariants), and it
    really re-deals (some position changes)."""
    spec = spec_of(game)
    moved = 0
    for i, state in enumerate(decision_points(spec, players, seed=41, count=12)):
        for observer in range(players):
            other = state.clone()
            other.resample_hidden(observer, Rng(500 + 7 * i + observer))
            assert other.view(observer) == state.view(observer)
            assert other.view(None) == state.view(None)
            assert _hidden_fields(other) == _hidden_fields(state)
            other.check_invariants()
            assert other.to_act() == state.to_act()
            moved += other.to_json() != state.to_json()
    assert moved, "re-dealing never changed anything: the test positions hide nothing"


@pytest.mark.parametrize("shuffle", ["fisher-yates", "keyed"])
@pytest.mark.parametrize("game", ["crazy_cultists", "trash_cult", "tricky_cultists"])
def test_a_bot_game_replays_exactly(game, shuffle):
    """Seeded with an iterations budget, the same game is played move for move, under both
    deals (a keyed deal's reshuffles happen inside the search's determinisations too)."""
    spec = spec_of(game)
    players = 4 if game == "tricky_cultists" else 2
    bots = ["ismcts:iterations=6,depth=4,prior=1", "heuristic"] * (players // 2)
    config = {"rounds": 1} if game == "tricky_cultists" else None
    if game == "crazy_cultists":
        config = {"two_players": True}  # CC-2: 2 players is the sweep variant
    first = play_game(spec, config, players, 3, bots, shuffle=shuffle)
    second = play_game(spec, config, players, 3, bots, shuffle=shuffle)
    assert first.actions == second.actions
    assert first.winners == second.winners


def test_bad_parameters_are_refused():
    spec = spec_of("crazy_cultists")
    with pytest.raises(BadConfig, match="iterations >= 1 or ms > 0"):
        make_bot(spec, "ismcts:iterations=0")
    with pytest.raises(BadConfig, match="cannot roll out with itself"):
        make_bot(spec, "ismcts:rollout=ismcts")
    with pytest.raises(BadConfig, match="must not be negative"):
        make_bot(spec, "ismcts:prior=-1")
    with pytest.raises(BadConfig, match="no parameter"):
        make_bot(spec, "ismcts:budget=3")
    with pytest.raises(BadConfig, match="unknown bot"):
        make_bot(spec, "ismcts:rollout=clever")


def test_wall_clock_budget_runs_at_least_one_iteration():
    spec = spec_of("trash_cult")
    state = decision_points(spec, 2, seed=5, count=1)[0]
    seat = state.to_act()[0]
    bot = make_bot(spec, "ismcts:ms=5,depth=4", 1)
    assert bot.choose(state, seat, state.legal_actions(seat)) in state.legal_actions(seat)
    assert bot.last_iterations >= 1
