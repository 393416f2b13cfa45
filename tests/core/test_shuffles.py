"""The shared deck helper's refill shuffles a discard pile uniformly (core/decks.py `draw`,
which Crazy Cultists and Trash Cult both draw through; docs/fairness.md)."""

from __future__ import annotations

from services.engines.core.decks import draw
from services.engines.core.rng import Rng
from tests.support.fairness import SEEDS, assert_uniform_positions


def test_an_empty_deck_is_refilled_from_a_uniformly_shuffled_discard() -> None:
    orders = []
    for i in range(SEEDS):
        deck: list[int] = []
        discard = list(range(40))  # in a known order: a refill must not keep it
        drawn = draw(deck, discard, Rng(i))
        assert drawn is not None and not discard and sorted([*deck, drawn]) == list(range(40))
        orders.append([*deck, drawn])
    assert_uniform_positions("core.draw_refill", orders, range(40))
