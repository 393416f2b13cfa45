"""One scenario per Crazy Cultists ruling (CC-1..CC-11, G-4, G-5), each from the JSON state form."""

from __future__ import annotations

from collections import Counter

import pytest

from services.engines.core.errors import BadConfig, BadState
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.cards import NAMES, kind_table

from .tables import act, legal_labels, names, pass_window, table


def test_cc1_main_deck_is_90_cards_in_the_ruled_mix():
    kinds, n_main = kind_table(GAME.make_config())
    assert n_main == len(kinds) == 90
    assert Counter(NAMES[k] for k in kinds) == {
        "favor_1": 15,
        "favor_2": 15,
        "favor_3": 15,
        "favor_4": 15,
        "fall_from_grace": 4,
        "polymorphization": 3,
        "infernal_inferno": 3,
        "toiling_trouble": 3,
        "hex_o_rama": 3,
        "evil_eye": 3,
        "beelze_beatdown": 2,
        "nerdronomicon": 3,
        "counter_spell": 4,
        "switcheroo": 2,
    }


def test_cc2_three_cards_each_and_three_to_six_players():
    state = GAME.new_state(None, 4, seed=1)
    assert [len(h) for h in state.hands] == [3, 3, 3, 3] and len(state.deck) == 90 - 12
    assert GAME.new_state(None, 3, seed=1).num_players == 3
    assert GAME.new_state(None, 6, seed=1).num_players == 6
    with pytest.raises(BadConfig):
        GAME.new_state(None, 7, seed=1)


def test_cc2_two_players_only_behind_the_sweep_variant_switch():
    assert GAME.make_config().two_players is False  # off by default
    with pytest.raises(BadConfig, match=r"3-6 players.*CC-2.*two_players=true"):
        GAME.new_state(None, 2, seed=1)
    state = GAME.new_state({"two_players": True}, 2, seed=1)
    assert state.num_players == 2 and [len(h) for h in state.hands] == [3, 3]
    # A 2-player state without the switch is refused on restore too, changing nothing.
    doc = state.to_json()
    doc["config"]["two_players"] = False
    with pytest.raises(BadState, match="two_players"):
        GAME.state_class.from_json(doc)
    assert GAME.state_class.from_json(state.to_json()) == state


def test_cc3_a_turn_is_one_card_then_drawing_up_to_three():
    state = table(
        hands={0: ["favor_2", "favor_3", "fall_from_grace"], 1: ["favor_1"] * 3},
        deck_top=("hex_o_rama",),
    )
    act(state, 0, "play Favor 2")
    assert names(state, state.stacks[0]) == ["favor_2"]
    assert sorted(names(state, state.hands[0])) == ["fall_from_grace", "favor_3", "hex_o_rama"]
    assert state.active == 1 and state.turn == 2


def test_cc3_discard_one_card_when_none_can_be_played():
    state = table(hands={0: ["counter_spell", "switcheroo", "fall_from_grace"]})  # every stack empty
    assert legal_labels(state, 0) == [
        "discard Counter-Spell",
        "discard Switcheroo",
        "discard Fall From Grace",
    ]
    act(state, 0, "discard Switcheroo")
    assert names(state, state.discard) == ["switcheroo"]


def test_cc3_a_polymorphed_turn_is_skipped_with_no_decision_and_no_draw():
    state = table(hands={0: ["favor_1"] * 3, 1: ["favor_2"]}, poly=(1,))
    act(state, 0, "play Favor 1")
    assert state.active == 2 and state.turn == 3  # seat 1's skipped turn still counts as begun
    assert state.poly[1] == -1 and names(state, state.discard) == ["polymorphization"]
    assert state.decisions == 1 and any(e.kind == "skip" and e.seat == 1 for e in state.log)


def test_cc4_threshold_is_ten_minus_candles_held():
    state = table(
        hands={0: ["favor_1", "favor_1", "favor_1"]}, stacks={0: ["favor_4", "favor_3"]}, candles=[2, 0, 0, 0]
    )
    assert state.view(0)["players"][0]["need"] == 8
    act(state, 0, "play Favor 1")
    assert state.candles[0] == 3 and state.stacks[0] == []
    assert sorted(names(state, state.discard)) == ["favor_1", "favor_3", "favor_4"]


def test_cc4_a_candle_is_checked_whenever_a_stack_changes_even_on_another_turn():
    state = table(
        hands={0: ["switcheroo", "favor_1", "favor_1"]},
        stacks={0: ["favor_4"], 1: ["favor_4", "favor_4", "favor_1"]},
    )
    act(state, 0, "play Switcheroo on seat 1")
    pass_window(state)
    assert state.candles[1] == 1 and state.stacks[1] == []
    assert names(state, state.stacks[0]) == ["favor_1"]


def test_cc4_the_fifth_candle_wins_at_once():
    state = table(hands={0: ["favor_2", "favor_1", "favor_1"]}, stacks={0: ["favor_4"]}, candles=[4, 0, 0, 0])
    act(state, 0, "play Favor 2")
    assert state.is_terminal() and state.winners() == [0] and state.returns() == [1.0, 0.0, 0.0, 0.0]


def test_cc5_a_card_that_would_do_nothing_cannot_be_played():
    state = table(
        hands={0: ["fall_from_grace", "switcheroo", "toiling_trouble"]},
        stacks={2: ["favor_1", "favor_2"], 3: ["favor_2", "favor_2"]},
    )
    # No stack discard against an empty stack, no Switcheroo from an empty stack, no
    # Toiling Trouble without a pair.
    assert legal_labels(state, 0) == [
        "play Fall From Grace on seat 2",
        "play Fall From Grace on seat 3",
        "play Toiling Trouble on seat 3",
    ]


def test_cc5_polymorphization_cannot_mark_a_seat_already_marked():
    """Decided under CC-5: a second "skip your next turn" would skip the same turn: nothing."""
    state = table(hands={0: ["polymorphization"]}, poly=(1,))
    assert legal_labels(state, 0) == ["play Polymorphization on seat 2", "play Polymorphization on seat 3"]


def test_cc5_nerdronomicon_is_played_on_yourself():
    state = table(hands={0: ["nerdronomicon"]})
    assert legal_labels(state, 0) == ["play Nerdronomicon"]


def test_cc6_the_target_picks_which_pair():
    state = table(
        hands={0: ["toiling_trouble"]},
        stacks={1: ["favor_2", "favor_1", "favor_2", "favor_1", "favor_3"]},
    )
    act(state, 0, "play Toiling Trouble on seat 1")
    pass_window(state)
    assert state.to_act() == [1]
    assert legal_labels(state, 1) == [
        "discard the pair of 2s at stack positions 1 and 3",
        "discard the pair of 1s at stack positions 2 and 4",
    ]
    act(state, 1, "discard the pair of 1s at stack positions 2 and 4")
    assert names(state, state.stacks[1]) == ["favor_2", "favor_2", "favor_3"]


def test_cc7_g4_every_other_seat_is_asked_in_turn_order_whatever_it_holds():
    state = table(
        hands={0: ["fall_from_grace"], 1: ["favor_1"], 2: ["counter_spell"], 3: []},
        stacks={2: ["favor_3"]},
    )
    act(state, 0, "play Fall From Grace on seat 2")
    assert state.pending["asked"] == [1, 2, 3]
    assert legal_labels(state, 1) == ["pass"]  # asked although it holds no Counter-Spell
    act(state, 1, "pass")
    assert legal_labels(state, 2) == ["play Counter-Spell", "pass"]
    act(state, 2, "pass")
    assert legal_labels(state, 3) == ["pass"]
    act(state, 3, "pass")
    assert state.stacks[2] == []


def test_cc7_an_odd_chain_cancels_the_card_and_everyone_draws_back_up():
    state = table(
        hands={0: ["fall_from_grace", "favor_1", "favor_1"], 2: ["counter_spell", "favor_1", "favor_1"]},
        stacks={2: ["favor_3"]},
    )
    act(state, 0, "play Fall From Grace on seat 2")
    act(state, 1, "pass")
    act(state, 2, "play Counter-Spell")
    # G-4: the new round of asking starts from the active seat, skipping the counterer.
    assert state.pending["asked"] == [0, 1, 3]
    pass_window(state)
    assert names(state, state.stacks[2]) == ["favor_3"]
    assert sorted(names(state, state.discard)) == ["counter_spell", "fall_from_grace"]
    assert [len(h) for h in state.hands] == [3, 3, 3, 3] and state.active == 1


def test_cc7_a_counter_can_be_countered_by_the_original_player_and_an_even_chain_resolves():
    state = table(
        hands={0: ["fall_from_grace", "counter_spell"], 2: ["counter_spell"]},
        stacks={2: ["favor_3", "favor_4"]},
    )
    act(state, 0, "play Fall From Grace on seat 2")
    act(state, 1, "pass")
    act(state, 2, "play Counter-Spell")
    assert state.to_act() == [0]  # G-4: asking restarts from the active seat
    act(state, 0, "play Counter-Spell")
    assert state.pending["asked"] == [1, 2, 3] and len(state.pending["chain"]) == 2
    pass_window(state)
    assert names(state, state.stacks[2]) == ["favor_3"]


def test_g4_after_a_counter_asking_restarts_from_the_active_seat_skipping_the_counterer():
    """G-4 as worded: seat 0 active, seat 1 counters -> [0, 2, 3]; each asked one at a time."""
    state = table(
        hands={0: ["hex_o_rama", "counter_spell"], 1: ["counter_spell"], 2: ["counter_spell"], 3: []},
        stacks={1: ["favor_3"]},
    )
    act(state, 0, "play Hex-O-Rama on seat 1")
    assert state.pending["asked"] == [1, 2, 3]
    act(state, 1, "play Counter-Spell")
    assert state.pending["asked"] == [0, 2, 3] and state.to_act() == [0]
    assert state.view(None)["pending"]["asked"] == [0, 2, 3]
    act(state, 0, "pass")
    assert state.to_act() == [2]
    act(state, 2, "play Counter-Spell")  # seat 2 answers: active seat first again, skip seat 2
    assert state.pending["asked"] == [0, 1, 3]
    pass_window(state)
    assert state.stacks[1] == []  # two counters: the Hex-O-Rama resolves


def test_cc8_evil_eye_taking_nothing_is_a_legal_choice():
    state = table(hands={0: ["evil_eye"], 1: ["favor_4", "hex_o_rama"]})
    act(state, 0, "play Evil Eye on seat 1")
    pass_window(state)
    assert legal_labels(state, 0)[-1] == "take nothing"
    hand_before = sorted(state.hands[1])
    act(state, 0, "take nothing")
    assert set(hand_before) <= set(state.hands[1]) and "evil_eye" in names(state, state.discard)
    assert state.pending is None and state.active == 1
    assert [len(h) for h in state.hands] == [3, 3, 3, 3]  # seat 0 drew back up from the deck


def test_cc8_evil_eye_shows_the_hand_to_its_player_only_while_deciding():
    state = table(hands={0: ["evil_eye"], 1: ["favor_4", "counter_spell"]})
    act(state, 0, "play Evil Eye on seat 1")
    act(state, 1, "pass")  # holding a Counter-Spell, seat 1 lets it happen
    pass_window(state)
    shown = state.view(0)["pending"]["revealed"]
    assert shown == [{"seat": 1, "cards": ["favor_4", "counter_spell"]}]
    assert state.view(2)["pending"]["revealed"] == [] and state.view(None)["pending"]["revealed"] == []
    assert legal_labels(state, 0) == [
        "take Favor 4 from their hand",
        "take Counter-Spell from their hand",
        "take nothing",
    ]
    act(state, 0, "take Counter-Spell from their hand")
    assert "counter_spell" in names(state, state.hands[0])
    assert state.view(0)["pending"] is None
    assert not any("Counter" in e.text for e in state.log if e.kind == "take")  # the take stays private


def test_cc9_devilish_a_candle_discards_every_stack():
    state = table(
        config={"variant": "devilish"},
        hands={0: ["favor_4"]},
        stacks={0: ["favor_4", "favor_2"], 1: ["favor_3"], 3: ["favor_1", "favor_1"]},
    )
    act(state, 0, "play Favor 4")
    assert state.candles[0] == 1 and state.stacks == [[], [], [], []]


def test_cc9_fiendish_exact_hits_earn_and_going_over_loses_the_stack():
    exact = table(config={"variant": "fiendish"}, hands={0: ["favor_2"]}, stacks={0: ["favor_4", "favor_4"]})
    act(exact, 0, "play Favor 2")
    assert exact.candles[0] == 1
    over = table(config={"variant": "fiendish"}, hands={0: ["favor_4"]}, stacks={0: ["favor_4", "favor_4"]})
    act(over, 0, "play Favor 4")
    assert over.candles[0] == 0 and over.stacks[0] == []


def test_cc9_beast_flat_threshold_six_and_three_candles_win():
    state = table(
        config={"variant": "beast"},
        hands={0: ["favor_2"]},
        stacks={0: ["favor_4"]},
        candles=[2, 0, 0, 0],
    )
    assert state.view(0)["players"][0]["need"] == 6 and state.view(0)["candles_to_win"] == 3
    act(state, 0, "play Favor 2")
    assert state.winners() == [0]


def test_cc10_a_candle_offers_the_top_dark_power_instead_of_the_next_draw():
    state = table(
        config={"dark_powers": True},
        hands={
            0: ["favor_2", "favor_1", "favor_1"],
            1: ["favor_1"] * 3,
            2: ["favor_1"] * 3,
            3: ["favor_1"] * 3,
        },
        stacks={0: ["favor_4", "favor_4"]},
        dark_top=("life_siphon",),
    )
    act(state, 0, "play Favor 2")
    assert state.candles[0] == 1 and state.dark_due[0] == 1
    assert state.to_act() == [0] and state.pending["kind"] == "dark_draw"
    assert legal_labels(state, 0) == ["take the top Dark Powers card", "draw from the main deck"]
    act(state, 0, "take the top Dark Powers card")
    assert "life_siphon" in names(state, state.hands[0]) and state.dark_due[0] == 0
    assert state.active == 1 and state.pending is None


def test_cc10_dark_powers_can_be_countered_and_go_to_their_own_discard():
    state = table(
        config={"dark_powers": True},
        hands={0: ["life_siphon"], 1: ["counter_spell"]},
        stacks={1: ["favor_3"]},
    )
    act(state, 0, "play Life Siphon on seat 1")
    act(state, 1, "play Counter-Spell")
    pass_window(state)
    assert names(state, state.dark_discard) == ["life_siphon"] and names(state, state.discard) == [
        "counter_spell"
    ]
    assert names(state, state.stacks[1]) == ["favor_3"]


def test_cc10_dark_powers_can_be_stolen():
    state = table(config={"dark_powers": True}, hands={0: ["evil_eye"], 1: ["ouija"]})
    act(state, 0, "play Evil Eye on seat 1")
    pass_window(state)
    act(state, 0, "take Ouija from their hand")
    assert "ouija" in names(state, state.hands[0])


def test_cc11_optional_setup_removes_six_cards():
    kinds, n_main = kind_table(GAME.make_config({"optional_setup": True}))
    counts = Counter(NAMES[k] for k in kinds)
    assert n_main == 84
    assert (counts["fall_from_grace"], counts["infernal_inferno"], counts["hex_o_rama"]) == (2, 2, 2)
    assert (counts["evil_eye"], counts["counter_spell"]) == (2, 3)


def test_g5_the_turn_cap_ends_the_game_as_a_draw():
    state = table(config={"max_turns": 5}, hands={0: ["favor_1"]}, turn=5)
    act(state, 0, "play Favor 1")
    assert state.is_terminal() and state.winners() == [] and state.returns() == [0.25] * 4
    assert state.turn == 5 and any(e.kind == "capped" for e in state.log)


def test_g1_seat_zero_starts_and_play_passes_left():
    state = GAME.new_state(None, 3, seed=4)
    assert state.to_act() == [0] and state.turn == 1
    act(state, 0, legal_labels(state, 0)[0])
    while state.pending is not None:
        act(state, state.to_act()[0], legal_labels(state, state.to_act()[0])[-1])
    assert state.active == 1


def test_g2_same_config_seed_and_actions_give_the_same_game():
    one = GAME.new_state({"dark_powers": True}, 5, seed=77)
    two = GAME.new_state({"dark_powers": True}, 5, seed=77)
    assert one == two and one.deck != GAME.new_state({"dark_powers": True}, 5, seed=78).deck
