"""The keyed shuffle (docs/fairness.md, "Coupled deals"): uniform, coupled across decks that
differ by a card count, reproducible, and versioned, so that what was dealt by Fisher-Yates
before it still replays as it was."""

from __future__ import annotations

import pytest

from services.engines.core.deal_rng import DealRng
from services.engines.core.errors import BadConfig, BadState
from services.engines.core.game import SHUFFLES
from services.engines.core.play import play_game, replay
from services.engines.core.rng import Rng, _mix, card_tags, keyed_order, tie_key
from services.engines.trash_cult import GAME as TRASH
from services.engines.trash_cult.cards import FOOD, RAT
from tests.support.fairness import SEEDS, assert_uniform_cells, assert_uniform_positions

DONUT = FOOD + RAT  # the Rat cult's food
# A deck of 40 cards in 7 kinds, some with one copy, one with many.
KINDS = tuple(k for k, n in enumerate((1, 3, 9, 2, 12, 5, 8)) for _ in range(n))


def _kind_copies(kinds: tuple[int, ...], order: list[int]) -> list[tuple[int, int]]:
    """An order of card ids as (kind, copy index) pairs: what a card is, whatever its id."""
    tags = card_tags(kinds)
    names = {}
    seen: dict[int, int] = {}
    for c, k in enumerate(kinds):
        names[c] = (k, seen.get(k, 0))
        seen[k] = seen.get(k, 0) + 1
    assert len(set(tags)) == len(tags)
    return [names[c] for c in order]


def test_a_keyed_shuffle_deals_each_card_to_each_place_equally_often() -> None:
    orders = []
    for i in range(SEEDS):
        deck = list(range(len(KINDS)))
        Rng(i).keyed_shuffle(deck, card_tags(KINDS))
        assert sorted(deck) == list(range(len(KINDS)))
        orders.append(deck)
    assert_uniform_positions("core.keyed_shuffle", orders, range(len(KINDS)))


def test_the_deal_generator_keyed_shuffle_is_uniform_too() -> None:
    orders = []
    for i in range(SEEDS):
        deck = list(range(len(KINDS)))
        DealRng(i.to_bytes(32, "little")).keyed_shuffle(deck, card_tags(KINDS))
        orders.append(deck)
    assert_uniform_positions("core.deal_rng_keyed_shuffle", orders, range(len(KINDS)))


def test_a_keyed_shuffle_draws_one_number_whatever_the_deck() -> None:
    small, large = Rng(7), Rng(7)
    small.keyed_shuffle(list(range(5)), card_tags(KINDS[:5]))
    large.keyed_shuffle(list(range(40)), card_tags(KINDS))
    plain = Rng(7)
    plain.next_u64()
    assert small.state == large.state == plain.state


def test_one_card_fewer_keeps_the_order_of_every_other_card() -> None:
    """The plain keyed shuffle (refills): the deck without the last copy of kind 4 orders
    every other card as the full deck does, from the same generator state."""
    fewer = tuple(k for k, n in enumerate((1, 3, 9, 2, 11, 5, 8)) for _ in range(n))
    for seed in range(200):
        full, short = list(range(len(KINDS))), list(range(len(fewer)))
        Rng(seed).keyed_shuffle(full, card_tags(KINDS))
        Rng(seed).keyed_shuffle(short, card_tags(fewer))
        named_full = _kind_copies(KINDS, full)
        assert [x for x in named_full if x != (4, 11)] == _kind_copies(fewer, short)


def _named_decks(state: object) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    kinds = state.config.kinds  # type: ignore[attr-defined]
    return _kind_copies(kinds, state.deck), _kind_copies(kinds, state.chaos_deck)  # type: ignore[attr-defined]


def _whole_deck(state: object) -> list[tuple[int, int]]:
    """The active deck as shuffled, bottom to top: any cards already dealt (one at a time
    round the table, then the first turn's draw) put back on top in the order drawn."""
    s = state
    deal = len(s.hands[-1])  # type: ignore[attr-defined]
    pops = [s.hands[seat][r] for r in range(deal) for seat in range(s.num_players)]  # type: ignore[attr-defined]
    pops += s.hands[0][deal:]  # type: ignore[attr-defined]
    return _kind_copies(s.config.kinds, s.deck + pops[::-1])  # type: ignore[attr-defined]


@pytest.mark.parametrize("players", [2, 4])
def test_a_trash_cult_deal_without_one_donut_keeps_every_other_card_in_order(players: int) -> None:
    """Keyed setup: `donuts=9` deals the base game's active deck with its tenth Donut's
    place taken by the bottom card, the same chaos deck, and leaves the generator where the
    base game leaves it. Fisher-Yates reshuffles everything."""
    same_fy = 0
    for seed in range(100):
        base = TRASH.new_state(None, players, seed, None, "keyed")
        fewer = TRASH.new_state({"donuts": 9}, players, seed, None, "keyed")
        base_chaos = _named_decks(base)[1]
        fewer_chaos = _named_decks(fewer)[1]
        assert base_chaos == fewer_chaos
        assert base.rng.state == fewer.rng.state
        whole, whole_fewer = _whole_deck(base), _whole_deck(fewer)
        # Coupled with the printed deck: the missing Donut's place takes the bottom card;
        # every other card lies where it lies in the base deal.
        bottom = whole[0]
        expected = (
            [bottom if c == (DONUT, 9) else c for c in whole[1:]] if bottom != (DONUT, 9) else whole[1:]
        )
        assert whole_fewer == expected
        fy_base = TRASH.new_state(None, players, seed)
        fy_fewer = TRASH.new_state({"donuts": 9}, players, seed)
        same_fy += [c for c in _whole_deck(fy_base) if c != (DONUT, 9)] == _whole_deck(fy_fewer)
    assert same_fy == 0  # Fisher-Yates: one card fewer, one draw fewer, another order


def test_a_keyed_game_replays_from_its_record_and_records_its_shuffle() -> None:
    for seed in range(5):
        record = play_game(TRASH, None, 3, seed, ["random"] * 3, shuffle="keyed")
        assert record.shuffle == "keyed" and record.summary()["shuffle"] == "keyed"
        again = replay(TRASH, None, 3, seed, record.actions, shuffle="keyed")
        assert again.is_terminal() and again.winners() == record.winners and again.turn == record.turns
        doc = again.to_json()
        assert doc["shuffle"] == "keyed"
        restored = TRASH.state_class.from_json(doc)
        assert restored.shuffle == SHUFFLES.index("keyed") and restored.clone().shuffle == restored.shuffle


def test_a_record_without_a_shuffle_is_dealt_by_fisher_yates_as_before() -> None:
    """Every state and record made before keyed deals names no shuffle: they deal and
    replay by Fisher-Yates, unchanged (the golden games pin the exact positions)."""
    old = TRASH.new_state(None, 2, 11)
    assert "shuffle" not in old.to_json()
    assert play_game(TRASH, None, 2, 11, ["random"] * 2).summary().get("shuffle") is None
    deck = list(range(TRASH.make_config().active_cards))
    Rng(11).shuffle([])  # nothing drawn for an empty shuffle
    rng = Rng(11)
    chaos = list(range(TRASH.make_config().active_cards, len(TRASH.make_config().kinds)))
    rng.shuffle(chaos)
    rng.shuffle(deck)
    assert old.chaos_deck == chaos


def test_a_bad_shuffle_is_refused() -> None:
    with pytest.raises(BadConfig, match="shuffle must be one of"):
        TRASH.new_state(None, 2, 0, None, "riffle")
    doc = TRASH.new_state(None, 2, 0, None, "keyed").to_json()
    doc["shuffle"] = "riffle"
    with pytest.raises(BadState, match="shuffle must be"):
        TRASH.state_class.from_json(doc)
    doc["shuffle"] = "fisher-yates"  # never written: absence says it
    with pytest.raises(BadState, match="shuffle must be"):
        TRASH.state_class.from_json(doc)


def test_a_coupled_deal_one_card_short_moves_only_the_bottom_card_into_its_place() -> None:
    fewer = tuple(k for k, n in enumerate((1, 3, 9, 2, 11, 5, 8)) for _ in range(n))
    reference = {k: KINDS.count(k) for k in set(KINDS)}
    for seed in range(200):
        full, short = list(range(len(KINDS))), list(range(len(fewer)))
        Rng(seed).coupled_shuffle(full, KINDS, reference)
        Rng(seed).coupled_shuffle(short, fewer, reference)
        named_full, named_short = _kind_copies(KINDS, full), _kind_copies(fewer, short)
        plain = list(range(len(KINDS)))
        Rng(seed).keyed_shuffle(plain, card_tags(KINDS))
        assert full == plain  # the reference deck itself: the keyed order
        if named_full[0] == (4, 11):
            assert named_short == named_full[1:]
        else:
            assert named_short == [named_full[0] if c == (4, 11) else c for c in named_full[1:]]
        moved = sum(a != b for a, b in zip(named_full[1:], named_short, strict=True))
        assert moved <= 1


def test_a_coupled_deal_with_holes_is_uniform() -> None:
    """A deck short of its reference by several cards still deals each card to each place
    equally often: the hole-filling rule never looks at which card is which."""
    fewer = tuple(k for k, n in enumerate((1, 3, 6, 2, 9, 5, 8)) for _ in range(n))
    reference = {k: KINDS.count(k) for k in set(KINDS)}
    orders = []
    for i in range(SEEDS):
        deck = list(range(len(fewer)))
        Rng(i).coupled_shuffle(deck, fewer, reference)
        assert sorted(deck) == list(range(len(fewer)))
        orders.append(deck)
    assert_uniform_positions("core.coupled_deal", orders, range(len(fewer)))


def test_a_keyed_tie_break_picks_each_tied_action_equally_often_and_is_coupled() -> None:
    """The heuristic bots' tie-break in keyed games (rng.tie_key): among tied actions each
    wins equally often (chi-square over which action won), and a decision offering one
    action fewer, under the same salt, picks the same action unless that one was the
    winner: one card more in a hand does not re-randomise the tie."""
    actions = list(range(7))
    winners = []
    rng = Rng(5)
    for _ in range(SEEDS):
        salt = rng.next_u64()
        won = max(actions, key=lambda a: tie_key(salt, a))
        winners.append(won)
        fewer = max((a for a in actions if a != 3), key=lambda a: tie_key(salt, a))
        assert won == 3 or fewer == won
    assert_uniform_cells("core.keyed_tie_break", [winners], [1 / len(actions)] * len(actions))


@pytest.mark.parametrize("size", [0, 1, 2, 3, 31, 52, 90, 1023, 1500])
def test_the_key_sort_orders_every_deck_size_as_a_sort_of_the_keys_would(size: int) -> None:
    """`keyed_order`'s counting-and-insertion sort (rng._sort_keys) against Python's own
    sort of the same keys, from a deck of none to decks larger than the reused words."""
    tags = card_tags(tuple(range(size)))
    for salt in (0, 1, 0xFFFFFFFFFFFFFFFF, 0x123456789ABCDEF):
        items = list(range(size))
        Rng(salt).shuffle(items)
        expected = sorted(items, key=lambda c: (_mix(salt ^ tags[c]) >> 16, c))
        keyed_order(items, tags, salt)
        assert items == expected


def test_a_card_id_beyond_the_tags_is_refused() -> None:
    """The compiled shuffle does not check its indexes, except this one: an id from outside."""
    with pytest.raises(IndexError, match="card id 5"):
        keyed_order([0, 5], card_tags((0, 1)), 7)
