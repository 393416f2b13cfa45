"""Every shuffle of Crazy Cultists deals each card to each place equally often
(tests/support/fairness.py says how, docs/fairness.md which test guards which line).

The suites elsewhere check what a deck holds, never its order, so a deck left unshuffled
passed them all; these tests fail if any one shuffle of the rules is taken out."""

from __future__ import annotations

from typing import Any

from services.engines.core.game import State
from services.engines.crazy_cultists import GAME as SPEC
from tests.support.fairness import (
    assert_independent,
    assert_uniform_positions,
    cut,
    dealt,
    find_position,
    reshuffled,
    restored,
)

DARK = {"dark_powers": True}


def test_setup_shuffles_both_decks_uniformly_and_independently() -> None:
    """Setup (CC-1): the main deck and the Dark Powers deck, one shuffle each."""
    deals = dealt(SPEC, 4, DARK)
    first = deals[0]
    n_main, total = first.n_main, len(first.kind)
    assert_uniform_positions("crazy_cultists.main_deck_setup", [s.deck for s in deals], range(n_main))
    assert_uniform_positions(
        "crazy_cultists.dark_deck_setup", [s.dark_deck for s in deals], range(n_main, total)
    )
    pairs = [(cut(s.deck[-1], 0, n_main), cut(s.dark_deck[-1], n_main, total)) for s in deals]
    assert_independent("crazy_cultists.decks_independent", pairs)


def _scry(state: State) -> tuple[int, int] | None:
    p = state.pending
    if p is not None and p["kind"] == "scry":
        return state.to_act()[0], state.legal_actions(state.to_act()[0])[0]
    return None


def test_a_search_of_the_deck_hides_its_order_again() -> None:
    """Scrying Bones (G-3): the searcher saw the deck; after the take it is shuffled, so
    its new order owes nothing to the one they saw (here: the deck sorted)."""
    state, seat, action = find_position(SPEC, 4, DARK, _scry)
    doc = state.to_json()
    doc["deck"] = sorted(doc["deck"])
    before = restored(SPEC, doc)
    after = reshuffled(before, seat, action)
    pool = set(before.deck) - {c for c in before.deck if c not in after[0].deck}
    assert all(set(s.deck) == set(after[0].deck) for s in after)
    assert_uniform_positions("crazy_cultists.scry_reshuffle", [s.deck for s in after], pool)


def _emptied(state: State, deck: str, pile: str) -> dict[str, Any]:
    """`state` with `deck`'s cards moved to the bottom of `pile`, in sorted order: the
    next draw from `deck` refills it from that pile."""
    doc = state.to_json()
    doc[pile] = sorted(doc[pile] + doc[deck])
    doc[deck] = []
    doc["known_deck"] = [[] for _ in doc["known_deck"]]
    return doc


def _refill_position(deck: str, pile: str, least: int) -> tuple[State, int, int]:
    """A position where a move draws from `deck` emptied into `pile`, leaving at least
    `least` cards of the refilled deck behind (enough positions to test)."""

    def refills(state: State) -> tuple[int, int] | None:
        if len(getattr(state, pile)) + len(getattr(state, deck)) < least + 4:
            return None
        trial = restored(SPEC, _emptied(state, deck, pile))
        seat = trial.to_act()[0]
        for action in trial.legal_actions(seat):
            probe = trial.clone()
            probe.apply(seat, action)
            if len(getattr(probe, deck)) >= least:
                return seat, action
        return None

    state, seat, action = find_position(SPEC, 4, DARK, refills)
    return restored(SPEC, _emptied(state, deck, pile)), seat, action


def test_an_empty_main_deck_is_refilled_from_a_shuffled_discard() -> None:
    """The main deck ran out: its discard pile is shuffled into a new deck (core draw)."""
    before, seat, action = _refill_position("deck", "discard", 20)
    after = reshuffled(before, seat, action)
    size = min(len(s.deck) for s in after)
    orders = [s.deck[:size] for s in after]  # the bottom cards: a draw takes from the top
    assert_uniform_positions("crazy_cultists.discard_refill", orders, _pool(before.discard, orders))


def test_an_empty_dark_deck_is_refilled_from_its_shuffled_discard() -> None:
    """The Dark Powers deck works the same way with its own discard."""
    before, seat, action = _refill_position("dark_deck", "dark_discard", 4)
    after = reshuffled(before, seat, action)
    size = min(len(s.dark_deck) for s in after)
    orders = [s.dark_deck[:size] for s in after]
    assert_uniform_positions("crazy_cultists.dark_discard_refill", orders, _pool(before.dark_discard, orders))


def _pool(pile: list[int], orders: list[list[int]]) -> set[int]:
    """The cards the refill shuffled: the pile, and any card the move itself put on it
    first (the card played goes to the discard before the draw)."""
    return set(pile).union(*map(set, orders))


def test_a_keyed_setup_shuffles_both_decks_uniformly() -> None:
    """The sweeps' keyed deal (fairness.md, "Coupled deals") is as uniform as Fisher-Yates."""
    deals = dealt(SPEC, 4, DARK, "keyed")
    first = deals[0]
    n_main, total = first.n_main, len(first.kind)
    assert all(s.shuffle for s in deals)
    assert_uniform_positions("crazy_cultists.keyed_main_deck_setup", [s.deck for s in deals], range(n_main))
    assert_uniform_positions(
        "crazy_cultists.keyed_dark_deck_setup", [s.dark_deck for s in deals], range(n_main, total)
    )
