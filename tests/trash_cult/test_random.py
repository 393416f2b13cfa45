"""Random play over every player count, with and without the cult pick phase.

The shared checker (tests.support.random_play) asserts at every step: someone to act with
a legal action, invariants (all 112 cards in exactly one place), JSON and bytes round
trips, independent clones, replay to the same final state, and no leak of hidden cards
into the deciding seat's view. The extra check here adds the protobuf contract and label
distinctness at sampled steps. Short games (a low turn cap) keep hundreds of games fast;
a few full-length games cover the late game, reshuffles and the G-5 cap.
"""

from __future__ import annotations

import pytest

from services.engines.core.play import play_game
from services.engines.core.serial import state_to_bytes
from services.engines.trash_cult import GAME
from services.engines.trash_cult.proto import MESSAGES
from tests.support.random_play import check_random_games

FIXED = {2: ["Rat", "Skunk"], 3: ["Squirrel", "Raccoon", "Rat"], 4: ["Skunk", "Rat", "Raccoon", "Squirrel"]}
MAX_STATE_BYTES = 4096


def contract_checks(state) -> None:
    """Every 13th decision: all 112 cards accounted for, views and details convert to
    their protobuf messages, labels tell a seat's actions apart, the state fits in 4 KB."""
    if state.decisions % 13:
        return
    cards = [*state.deck, *state.trash, *state.chaos_deck, *state.chaos_discard]
    for s in range(state.num_players):
        cards += state.hands[s] + state.members[s] + state.hostages[s] + state.shrine[s] + state.stash[s]
        cards += [c for c in state.tucked[s] if c >= 0]
    if state.pending is not None and "card" in state.pending:
        cards.append(state.pending["card"])
    assert sorted(cards) == list(range(112))
    for seat in [None, *range(state.num_players)]:
        MESSAGES.view_to_any(state.view(seat))
    seat = state.to_act()[0]
    legal = state.legal_actions(seat)
    labels = [state.action_label(a) for a in legal]
    assert len(set(labels)) == len(labels), labels
    for action in legal:
        MESSAGES.action_to_any(state.action_detail(action))
    assert len(state_to_bytes(state)) <= MAX_STATE_BYTES


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("fixed", [False, True], ids=["pick-phase", "fixed-cults"])
def test_short_random_games(players, fixed):
    config = {"max_turns": 20, **({"cults": FIXED[players]} if fixed else {})}
    finals = check_random_games(
        GAME,
        players,
        games=150,
        seed=1000 * players + fixed,
        config=config,
        roundtrip_every=6,
        leak_every=9,
        extra=contract_checks,
    )
    assert all(s.is_terminal() for s in finals)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_full_length_random_games(players):
    """Whole games to a win or the G-5 cap, checked more sparsely."""
    finals = check_random_games(
        GAME, players, games=5, seed=77 * players, roundtrip_every=40, leak_every=31, extra=contract_checks
    )
    assert all(s.winners() or s.turn == 500 for s in finals)


def test_random_play_is_deterministic():
    """G-2: the same seed plays the same game, bit for bit; another seed does not."""
    first = play_game(GAME, None, 4, 5, ["random"] * 4)
    again = play_game(GAME, None, 4, 5, ["random"] * 4)
    other = play_game(GAME, None, 4, 6, ["random"] * 4)
    assert first.actions == again.actions and first.winners == again.winners
    assert first.actions != other.actions
