"""One scenario per Dark Powers card (CC-10: read from the player's side), from the JSON state form."""

from __future__ import annotations

from typing import Any

from services.engines.core.game import State
from services.engines.crazy_cultists.cards import DARK_FAVOR_4, NAMES

from .tables import act, legal_labels, names, pass_window, table

DARK = {"dark_powers": True}


def dark_table(**fields: Any) -> State:
    return table(config=DARK, **fields)


def test_four_favor_points_adds_four_to_your_stack():
    state = dark_table(hands={0: ["dark_favor_4"]}, stacks={0: ["favor_1"]})
    act(state, 0, "play 4 Favor Points")
    assert state.pending["kind"] == "counter"  # every Dark Power can be countered (CC-7)
    pass_window(state)
    assert names(state, state.stacks[0]) == ["favor_1", "dark_favor_4"]


def test_life_siphon_moves_the_targets_last_card_onto_your_stack():
    state = dark_table(hands={0: ["life_siphon"]}, stacks={0: ["favor_1"], 2: ["favor_2", "favor_4"]})
    act(state, 0, "play Life Siphon on seat 2")
    pass_window(state)
    assert names(state, state.stacks[0]) == ["favor_1", "favor_4"]
    assert names(state, state.stacks[2]) == ["favor_2"]


def test_black_spire_takes_the_next_favor_until_three_and_hijinx_leave_it_alone():
    """CC-10: favor goes onto the Spire until it holds 3 or more, then both are discarded."""
    state = dark_table(
        hands={0: ["black_spire", "fall_from_grace"], 1: ["favor_2", "favor_1", "favor_1"]},
        stacks={1: ["favor_3", "favor_4"]},
    )
    act(state, 0, "play Black Spire on seat 1")
    pass_window(state)
    assert state.view(None)["players"][1]["spired"]
    act(state, 1, "play Favor 2")
    assert names(state, state.spire[1]) == ["black_spire", "favor_2"]
    assert names(state, state.stacks[1]) == ["favor_3", "favor_4"]  # its own stack waits
    state = dark_table(
        hands={0: ["fall_from_grace"], 1: ["favor_1"]},
        stacks={1: ["favor_3"]},
        spire={1: ["favor_2"]},
    )
    act(state, 0, "play Fall From Grace on seat 1")
    pass_window(state)
    assert state.stacks[1] == [] and names(state, state.spire[1]) == ["black_spire", "favor_2"]
    act(state, 1, "play Favor 1")  # 2 + 1 = 3: the Spire falls
    assert state.spire[1] == [] and "black_spire" in names(state, state.dark_discard)
    assert sorted(names(state, state.discard)) == ["fall_from_grace", "favor_1", "favor_2", "favor_3"]


def test_necromancy_takes_any_card_back_from_the_main_discard():
    state = dark_table(hands={0: ["necromancy"]}, discard=("favor_1", "hex_o_rama"))
    act(state, 0, "play Necromancy")
    pass_window(state)
    assert legal_labels(state, 0) == [
        "take Favor 1 from the discard pile",
        "take Hex-O-Rama from the discard pile",
    ]
    act(state, 0, "take Hex-O-Rama from the discard pile")
    assert "hex_o_rama" in names(state, state.hands[0]) and names(state, state.discard) == ["favor_1"]


def test_dark_baptism_shields_you_until_your_next_regular_turn_and_you_go_again():
    """CC-10: no Hijinx may target you until the start of your next turn; another turn at once."""
    state = dark_table(
        hands={0: ["dark_baptism", "favor_1", "favor_1"], 1: ["fall_from_grace"]},
        stacks={0: ["favor_2"], 2: ["favor_1"]},
    )
    act(state, 0, "play Dark Baptism")
    pass_window(state)
    assert state.active == 0 and state.turn == 2 and state.baptized[0]
    act(state, 0, "play Favor 1")  # the extra turn
    assert state.active == 1 and state.baptized[0]
    assert "play Fall From Grace on seat 0" not in legal_labels(state, 1)
    assert "play Fall From Grace on seat 2" in legal_labels(state, 1)


def test_ouija_shows_the_targets_hand_then_swap_or_discard_it():
    state = dark_table(hands={0: ["ouija", "favor_1"], 1: ["favor_4", "counter_spell"]})
    act(state, 0, "play Ouija on seat 1")
    pass_window(state)
    assert state.view(0)["pending"]["revealed"] == [{"seat": 1, "cards": ["favor_4", "counter_spell"]}]
    assert state.view(1)["pending"]["revealed"] == []
    assert legal_labels(state, 0) == ["swap hands", "make them discard their hand", "leave their hand"]
    act(state, 0, "swap hands")
    assert names(state, state.hands[0])[:2] == ["favor_4", "counter_spell"]
    assert names(state, state.hands[1])[:1] == ["favor_1"]


def test_fear_the_reaper_discards_every_other_hand():
    state = dark_table(
        hands={0: ["fear_the_reaper", "favor_1"], 1: ["favor_4"], 3: ["switcheroo", "counter_spell"]}
    )
    act(state, 0, "play Fear The Reaper")
    pass_window(state)
    assert sorted(names(state, state.discard)) == ["counter_spell", "favor_4", "switcheroo"]
    assert "favor_1" in names(state, state.hands[0])


def test_puppet_master_passes_every_hand_to_the_right():
    state = dark_table(
        hands={0: ["puppet_master", "favor_1"], 1: ["favor_2"], 2: ["favor_3"], 3: ["favor_4"]}
    )
    act(state, 0, "play Puppet Master")
    pass_window(state)
    # Right is seat - 1 (G-1): seat 1's hand goes to seat 0, seat 0's to seat 3.
    assert [names(state, h)[0] for h in state.hands] == ["favor_2", "favor_3", "favor_4", "favor_1"]


def test_forbidden_alchemy_draws_three_and_returns_two_in_your_order():
    state = dark_table(
        hands={0: ["forbidden_alchemy", "favor_1", "favor_1"]},
        deck_top=("favor_4", "hex_o_rama", "favor_2"),
    )
    act(state, 0, "play Forbidden Alchemy")
    pass_window(state)
    assert sorted(names(state, state.hands[0])) == ["favor_1", "favor_1", "favor_2", "favor_4", "hex_o_rama"]
    act(state, 0, "return Favor 1 to the deck")
    act(state, 0, "return Favor 2 to the deck")  # the last returned is the new top card
    assert sorted(names(state, state.hands[0])) == ["favor_1", "favor_4", "hex_o_rama"]
    assert names(state, state.hands[1][:2]) == ["favor_2", "favor_1"]  # seat 1 draws them next


def test_scrying_bones_searches_the_deck_and_shows_the_card():
    state = dark_table(hands={0: ["scrying_bones"]})
    act(state, 0, "play Scrying Bones")
    pass_window(state)
    looking = state.view(0)["pending"]["looking"]
    assert len(looking) == len(state.deck) and looking == sorted(looking)  # contents, not order
    assert state.view(1)["pending"]["looking"] == []
    act(state, 0, "take Beelze-Beatdown from the deck")
    assert "beelze_beatdown" in names(state, state.hands[0])
    assert any(e.text == "seat 0 takes Beelze-Beatdown from the deck" for e in state.log)


def test_hail_yourself_reveals_all_other_hands_and_takes_one_card():
    state = dark_table(hands={0: ["hail_yourself"], 1: ["favor_3"], 2: [], 3: ["counter_spell"]})
    act(state, 0, "play Hail Yourself")
    pass_window(state)
    shown = [
        {"seat": 1, "cards": ["favor_3"]},
        {"seat": 2, "cards": []},
        {"seat": 3, "cards": ["counter_spell"]},
    ]
    assert state.view(2)["pending"]["revealed"] == shown == state.view(None)["pending"]["revealed"]
    assert legal_labels(state, 0) == ["take Favor 3 from seat 1", "take Counter-Spell from seat 3"]
    act(state, 0, "take Counter-Spell from seat 3")
    assert "counter_spell" in names(state, state.hands[0])


def test_voodoo_discards_cards_with_it_and_the_target_loses_as_many():
    """CC-10: the count includes Voodoo itself, as printed ("including this card")."""
    state = dark_table(
        hands={0: ["voodoo", "favor_1", "switcheroo"]},
        stacks={1: ["favor_4", "favor_2", "favor_2", "favor_1"]},
    )
    act(state, 0, "play Voodoo on seat 1")
    assert legal_labels(state, 0) == [
        "also discard Favor 1",
        "also discard Switcheroo",
        "discard no more cards",
    ]
    act(state, 0, "also discard Switcheroo")
    act(state, 0, "discard no more cards")
    pass_window(state)
    assert names(state, state.stacks[1]) == ["favor_4", "favor_2"]


def test_heavy_metal_discards_everyone_elses_last_card():
    state = dark_table(
        hands={0: ["heavy_metal"]},
        stacks={0: ["favor_1"], 1: ["favor_2", "favor_3"], 3: ["favor_4"]},
    )
    act(state, 0, "play Heavy Metal")
    pass_window(state)
    assert [names(state, s) for s in state.stacks] == [["favor_1"], ["favor_2"], [], []]


def test_forbidden_alchemy_can_return_dark_powers_cards_held_in_hand():
    """'Return any 2 cards from your hand': a Dark Powers card goes back on top of its own deck."""
    state = dark_table(
        hands={0: ["forbidden_alchemy", "ouija", "favor_1"]},
        deck_top=("favor_4", "hex_o_rama", "favor_2"),
    )
    act(state, 0, "play Forbidden Alchemy")
    pass_window(state)
    assert "return Ouija to the deck" in legal_labels(state, 0)
    dark_before = len(state.dark_deck)
    act(state, 0, "return Ouija to the deck")
    assert names(state, state.dark_deck[-1:]) == ["ouija"] and len(state.dark_deck) == dark_before + 1
    act(state, 0, "return Favor 1 to the deck")
    assert sorted(names(state, state.hands[0])) == ["favor_2", "favor_4", "hex_o_rama"]
    assert "ouija" not in names(state, state.deck)  # the decks never mix (CC-10)
    state.check_invariants()


# Dark Powers on, with a single Dark card in the game: the piles are empty while it is held.
ONE_DARK = {
    "dark_powers": True,
    **{name: 0 for name in NAMES[DARK_FAVOR_4:]},
    "ouija": 1,
}


def test_an_owed_dark_draw_lapses_when_both_dark_piles_are_empty():
    """CC-10 offers the Dark card instead of the draw after the candle: with nothing to offer,
    the main-deck draw happens and nothing stays owed (`dark_due` back to 0)."""
    state = table(
        config=ONE_DARK,
        hands={0: ["favor_2", "favor_1", "favor_1"], 1: ["ouija", "favor_1", "favor_1"]},
        stacks={0: ["favor_4", "favor_4"]},
    )
    assert state.dark_deck == [] and state.dark_discard == []
    act(state, 0, "play Favor 2")
    assert state.candles[0] == 1
    assert state.pending is None and state.active == 1  # no Dark choice was offered
    assert state.dark_due[0] == 0 and len(state.hands[0]) == 3  # drew from the main deck
    assert any(e.kind == "dark" and e.seat == 0 for e in state.log)


def test_an_owed_dark_draw_is_still_offered_when_only_the_dark_discard_holds_cards():
    state = table(
        config=ONE_DARK,
        hands={0: ["favor_2", "favor_1", "favor_1"]},
        stacks={0: ["favor_4", "favor_4"]},
        dark_discard=("ouija",),
    )
    act(state, 0, "play Favor 2")
    assert state.pending["kind"] == "dark_draw" and state.dark_due[0] == 1
    act(state, 0, "take the top Dark Powers card")
    assert "ouija" in names(state, state.hands[0]) and state.dark_due[0] == 0


def test_scrying_bones_take_is_shown_to_everyone_and_every_seat_remembers_it():
    """Rulebook: "Search through the main deck and choose a card. Show it to everyone then add
    it to your hand." The take is public (G-3: the card is shown to the table), so the public
    log names it and no seat's determinisation may put that card anywhere but the taker's
    hand (issue 16), while the deck's order stays hidden from all."""
    from services.engines.core.rng import Rng

    state = dark_table(hands={0: ["scrying_bones"]})
    act(state, 0, "play Scrying Bones")
    pass_window(state)
    act(state, 0, "take Beelze-Beatdown from the deck")
    taken = next(c for c in state.hands[0] if names(state, [c]) == ["beelze_beatdown"])
    assert [e.text for e in state.log if e.kind == "take"] == ["seat 0 takes Beelze-Beatdown from the deck"]
    for seat in range(4):
        assert taken in state.known[seat]
    for observer in (1, 2, 3):
        for salt in range(8):
            det = state.clone()
            det.resample_hidden(observer, Rng(salt))
            assert "beelze_beatdown" in names(det, det.hands[0]), f"seat {observer} saw it shown"


def test_cards_a_seat_put_on_top_are_known_in_the_hand_that_draws_them_until_one_goes_back():
    """Seat 1 knows the two cards on top (it put them there: Nerdronomicon, in the state's
    `known`). Seat 0's Forbidden Alchemy draws them in plain sight: seat 1 knows seat 0 holds
    them until seat 0 returns a card it cannot see (issue 16)."""
    from services.engines.core.rng import Rng

    state = dark_table(
        hands={0: ["forbidden_alchemy", "favor_1", "favor_1"]},
        deck_top=("favor_4", "hex_o_rama", "favor_2"),
    )
    tops = state.deck[-2:]
    assert names(state, tops) == ["hex_o_rama", "favor_4"]
    state.known[1] = list(tops)
    state.check_invariants()
    act(state, 0, "play Forbidden Alchemy")
    pass_window(state)
    assert state.pending["kind"] == "alchemy"
    for salt in range(8):
        det = state.clone()
        det.resample_hidden(1, Rng(salt))
        assert {"hex_o_rama", "favor_4"} <= set(names(det, det.hands[0]))
    act(state, 0, "return Favor 1 to the deck")
    assert not set(tops) & set(state.known[1])  # which card went back is hidden from seat 1
