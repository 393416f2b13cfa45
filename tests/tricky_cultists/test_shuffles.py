"""Every shuffle of Tricky Cultists deals each card to each place equally often
(tests/support/fairness.py says how, docs/fairness.md which test guards which line).

Hands and Codexes are kept sorted, so what the cult deck's shuffle decides is which zone a
card lands in; the agenda deck's order is the pack and the cards left out of the draft."""

from __future__ import annotations

from services.engines.core.game import State
from services.engines.tricky_cultists import GAME as SPEC
from tests.support.fairness import (
    assert_independent,
    assert_uniform_cells,
    assert_uniform_positions,
    cut,
    dealt,
    find_position,
    reshuffled,
)

PLAYERS = 4


def _zones(state: State) -> list[int]:
    """Per card of the cult deck: the hand (0..n-1), the Codex (n..2n-1) or the undealt
    rest (2n) it was dealt to."""
    n = state.num_players
    where = [2 * n] * state.config.cards
    for s in range(n):
        for c in state.hands[s]:
            where[c] = s
        for c in state.codex[s]:
            where[c] = n + s
    return where


def _odds(state: State) -> list[float]:
    cfg, n = state.config, state.num_players
    rest = cfg.cards - n * (cfg.hand_size + cfg.codex_size)
    sizes = [cfg.hand_size] * n + [cfg.codex_size] * n + ([rest] if rest else [])
    return [size / cfg.cards for size in sizes]


def _assert_fair_cult_deal(name: str, states: list[State]) -> None:
    zones = [_zones(s) for s in states]
    cards = states[0].config.cards
    assert_uniform_cells(name, [[z[c] for z in zones] for c in range(cards)], _odds(states[0]))


def test_the_deal_shuffles_both_decks_uniformly_and_independently() -> None:
    """TK-1 and TK-4: the cult deck dealt to hands and Codexes, the agenda deck to the pack."""
    deals = dealt(SPEC, PLAYERS)
    _assert_fair_cult_deal("tricky_cultists.cult_deck_deal", deals)
    agendas = deals[0].config.agenda_cards
    orders = [s.pack + s.agenda_out for s in deals]
    assert_uniform_positions("tricky_cultists.agenda_deck_deal", orders, range(agendas))
    pairs = [(_zones(s)[0] % PLAYERS, cut(s.pack[0], 0, agendas)) for s in deals]
    assert_independent("tricky_cultists.decks_independent", pairs)


def _ends_round(state: State) -> tuple[int, int] | None:
    if state.phase == "draft" or sum(map(len, state.hands)) > 1:
        return None
    seat = state.to_act()[0]
    for action in state.legal_actions(seat):
        probe = state.clone()
        probe.apply(seat, action)
        if probe.round == state.round + 1:
            return seat, action
    return None


def test_each_later_round_is_dealt_afresh() -> None:
    """TK-1: every round is a fresh deal of both decks, not the last round's order."""
    state, seat, action = find_position(SPEC, PLAYERS, None, _ends_round)
    after = reshuffled(state, seat, action)
    assert all(s.round == state.round + 1 for s in after)
    _assert_fair_cult_deal("tricky_cultists.later_round_deal", after)


def test_a_keyed_deal_shuffles_the_cult_deck_uniformly() -> None:
    """The sweeps' keyed deal (fairness.md, "Coupled deals") is as uniform as Fisher-Yates."""
    deals = dealt(SPEC, PLAYERS, None, "keyed")
    assert all(s.shuffle for s in deals)
    _assert_fair_cult_deal("tricky_cultists.keyed_cult_deck_deal", deals)
