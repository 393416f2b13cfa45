"""Every shuffle of Trash Cult deals each card to each place equally often
(tests/support/fairness.py says how, docs/fairness.md which test guards which line).

The suites elsewhere check what a deck holds, never its order, so a chaos deck that always
came in the same order passed them all; these tests fail if any one shuffle is taken out."""

from __future__ import annotations

from typing import Any

from services.engines.core.game import State
from services.engines.trash_cult import GAME as SPEC
from services.engines.trash_cult.cards import SQUIRREL
from tests.support.fairness import (
    assert_independent,
    assert_uniform_positions,
    cut,
    dealt,
    find_position,
    reshuffled,
    restored,
)


def test_setup_shuffles_both_decks_uniformly_and_independently() -> None:
    """Setup: the chaos deck and the active deck, one shuffle each."""
    deals = dealt(SPEC, 4)
    active = deals[0].config.active_cards
    total = len(deals[0].config.kinds)
    assert_uniform_positions(
        "trash_cult.chaos_deck_setup", [s.chaos_deck for s in deals], range(active, total)
    )
    assert_uniform_positions("trash_cult.active_deck_setup", [s.deck for s in deals], range(active))
    pairs = [(cut(s.deck[-1], 0, active), cut(s.chaos_deck[-1], active, total)) for s in deals]
    assert_independent("trash_cult.decks_independent", pairs)


def _squirrel(state: State) -> tuple[int, int] | None:
    p = state.pending
    if p is not None and p["step"] == "perk" and p.get("perk") == SQUIRREL and len(state.deck) >= 30:
        return p["seat"], state.legal_actions(p["seat"])[0]
    return None


def test_a_squirrel_search_hides_the_deck_order_again() -> None:
    """The Squirrel's search saw the active deck; after the take it is shuffled, so its
    new order owes nothing to the one the searcher saw (here: the deck sorted)."""
    state, seat, action = find_position(SPEC, 4, None, _squirrel)
    doc = state.to_json()
    doc["deck"] = sorted(doc["deck"])
    before = restored(SPEC, doc)
    after = reshuffled(before, seat, action)
    assert all(set(s.deck) == set(after[0].deck) for s in after)
    assert_uniform_positions("trash_cult.squirrel_reshuffle", [s.deck for s in after], after[0].deck)


def _moved(state: State, keep: int) -> dict[str, Any]:
    """`state` with all but `keep` cards of the active deck moved to the trash, sorted."""
    doc = state.to_json()
    doc["trash"] = sorted(doc["trash"] + doc["deck"][: len(doc["deck"]) - keep])
    doc["deck"] = doc["deck"][len(doc["deck"]) - keep :]
    doc["known_deck"] = [[] for _ in doc["known_deck"]]
    return doc


def _refill_position(keep: int) -> tuple[State, int, int]:
    """A position where the next move draws while the active deck holds `keep` cards and
    the trash the rest (sorted), so the draw runs the deck out and the trash refills it."""

    def refills(state: State) -> tuple[int, int] | None:
        if state.pending is not None or len(state.deck) + len(state.trash) < 40:
            return None
        trial = restored(SPEC, _moved(state, keep))
        seat = trial.to_act()[0]
        for action in trial.legal_actions(seat):
            probe = trial.clone()
            probe.apply(seat, action)
            if not probe.trash and len(probe.deck) >= 30:
                return seat, action
        return None

    state, seat, action = find_position(SPEC, 4, None, refills)
    return restored(SPEC, _moved(state, keep)), seat, action


def _bottom(after: list[State], pile: list[int]) -> tuple[list[list[int]], set[int]]:
    size = min(len(s.deck) for s in after)
    orders = [s.deck[:size] for s in after]  # the bottom cards: draws take from the top
    return orders, set(pile).union(*map(set, orders))


def test_a_deck_that_runs_out_is_refilled_from_the_shuffled_trash() -> None:
    """TC-4: the moment the active deck runs out, the trash is shuffled into a new deck."""
    before, seat, action = _refill_position(keep=1)
    orders, pool = _bottom(reshuffled(before, seat, action), before.trash)
    assert_uniform_positions("trash_cult.trash_refill", orders, pool)


def test_a_draw_from_an_empty_deck_refills_it_from_the_shuffled_trash() -> None:
    """A deck that ran out while the trash was empty is refilled at the next draw."""
    before, seat, action = _refill_position(keep=0)
    orders, pool = _bottom(reshuffled(before, seat, action), before.trash)
    assert_uniform_positions("trash_cult.empty_deck_refill", orders, pool)


def test_a_keyed_setup_shuffles_both_decks_uniformly_and_independently() -> None:
    """The sweeps' keyed deal (fairness.md, "Coupled deals") is as uniform as Fisher-Yates."""
    deals = dealt(SPEC, 4, None, "keyed")
    active = deals[0].config.active_cards
    total = len(deals[0].config.kinds)
    assert all(s.shuffle for s in deals)
    assert_uniform_positions(
        "trash_cult.keyed_chaos_deck_setup", [s.chaos_deck for s in deals], range(active, total)
    )
    assert_uniform_positions("trash_cult.keyed_active_deck_setup", [s.deck for s in deals], range(active))
    pairs = [(cut(s.deck[-1], 0, active), cut(s.chaos_deck[-1], active, total)) for s in deals]
    assert_independent("trash_cult.keyed_decks_independent", pairs)


def test_a_keyed_deck_that_runs_out_is_refilled_from_the_uniformly_shuffled_trash() -> None:
    before, seat, action = _refill_position(keep=1)
    doc = before.to_json()
    doc["shuffle"] = "keyed"
    keyed = restored(SPEC, doc)
    orders, pool = _bottom(reshuffled(keyed, seat, action), keyed.trash)
    assert_uniform_positions("trash_cult.keyed_trash_refill", orders, pool)
