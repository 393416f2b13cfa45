"""One scenario per Hijinx card, read from the target's side (CC-5), from the JSON state form."""

from __future__ import annotations

from services.engines.core.game import State
from services.engines.crazy_cultists.cards import KIND_OF_NAME, TITLES

from .tables import act, legal_labels, names, pass_window, table


def _hit(card: str, target_stack: list[str]) -> State:
    state = table(hands={0: [card]}, stacks={1: target_stack})
    act(state, 0, f"play {TITLES[KIND_OF_NAME[card]]} on seat 1")
    pass_window(state)
    return state


def test_fall_from_grace_discards_the_most_recent_favor_card():
    state = _hit("fall_from_grace", ["favor_1", "favor_3"])
    assert names(state, state.stacks[1]) == ["favor_1"]
    assert sorted(names(state, state.discard)) == ["fall_from_grace", "favor_3"]


def test_infernal_inferno_discards_the_two_most_recent():
    state = _hit("infernal_inferno", ["favor_1", "favor_2", "favor_3"])
    assert names(state, state.stacks[1]) == ["favor_1"]


def test_hex_o_rama_discards_the_three_most_recent():
    state = _hit("hex_o_rama", ["favor_4", "favor_1", "favor_2", "favor_1"])
    assert names(state, state.stacks[1]) == ["favor_4"]


def test_beelze_beatdown_discards_the_whole_stack():
    state = table(hands={0: ["beelze_beatdown"]}, stacks={1: ["favor_4", "favor_1", "favor_2"]})
    act(state, 0, "play Beelze-Beatdown on seat 1")
    pass_window(state)
    assert state.stacks[1] == []


def test_polymorphization_marks_the_target_and_skips_its_next_turn():
    state = table(hands={0: ["polymorphization"], 1: ["favor_1"]})
    act(state, 0, "play Polymorphization on seat 2")
    pass_window(state)
    assert state.view(None)["players"][2]["polymorphed"] and state.active == 1
    act(state, 1, "play Favor 1")
    assert state.active == 3 and state.poly[2] == -1
    assert "polymorphization" in names(state, state.discard)


def test_toiling_trouble_discards_a_pair_of_the_same_value_cc6():
    state = table(hands={0: ["toiling_trouble"]}, stacks={1: ["favor_3", "favor_1", "favor_3"]})
    act(state, 0, "play Toiling Trouble on seat 1")
    pass_window(state)
    act(state, 1, "discard the pair of 3s at stack positions 1 and 3")
    assert names(state, state.stacks[1]) == ["favor_1"]


def test_evil_eye_lets_its_player_take_a_card_from_the_target_cc8():
    state = table(hands={0: ["evil_eye"], 1: ["favor_4", "favor_1"]})
    act(state, 0, "play Evil Eye on seat 1")
    pass_window(state)
    act(state, 0, "take Favor 4 from their hand")
    assert "favor_4" in names(state, state.hands[0]) and "favor_4" not in names(state, state.hands[1])


def test_nerdronomicon_keeps_one_of_the_top_three_and_orders_the_other_two():
    state = table(
        hands={0: ["nerdronomicon", "favor_2", "favor_2"]}, deck_top=("favor_1", "favor_4", "hex_o_rama")
    )
    act(state, 0, "play Nerdronomicon")
    pass_window(state)
    assert state.view(0)["pending"]["looking"] == ["favor_1", "favor_4", "hex_o_rama"]
    assert state.view(1)["pending"]["looking"] == []  # only its player looks
    act(state, 0, "keep Favor 4")
    assert legal_labels(state, 0) == ["put Favor 1 back on top", "put Hex-O-Rama back on top"]
    act(state, 0, "put Hex-O-Rama back on top")
    # Seat 0 is full again; the draw-up fills seats 1-3 from the top: Hex-O-Rama first.
    assert names(state, state.hands[1][:2]) == ["hex_o_rama", "favor_1"]


def test_nerdronomicon_player_knows_which_hand_drew_the_cards_it_put_back():
    """Issue 16 (G-3 keeps the look private): seat 0 saw the two cards it put back and saw
    seat 1 draw them, so in every world seat 0 could be in, seat 1 holds them; seat 2 saw
    only the draw, so for it they may be anything."""
    from services.engines.core.rng import Rng

    state = table(
        hands={0: ["nerdronomicon", "favor_2", "favor_2"]}, deck_top=("favor_1", "favor_4", "hex_o_rama")
    )
    act(state, 0, "play Nerdronomicon")
    pass_window(state)
    act(state, 0, "keep Favor 4")
    act(state, 0, "put Hex-O-Rama back on top")
    put_back = state.hands[1][:2]
    worlds = []
    for salt in range(12):
        det = state.clone()
        det.resample_hidden(0, Rng(salt))
        assert {"hex_o_rama", "favor_1"} <= set(names(det, det.hands[1]))
        det = state.clone()
        det.resample_hidden(2, Rng(salt))
        worlds.append(sorted(names(det, det.hands[1])))
    assert len({tuple(w) for w in worlds}) > 1  # seat 2 cannot tell: its worlds differ
    assert not set(put_back) & set(state.known[2])


def test_counter_spell_cannot_be_played_on_your_own_turn():
    state = table(hands={0: ["counter_spell", "favor_2"]})
    assert legal_labels(state, 0) == ["play Favor 2"]


def test_counter_spell_negates_a_hijinx_cc7():
    state = table(hands={0: ["beelze_beatdown"], 2: ["counter_spell"]}, stacks={1: ["favor_4"]})
    act(state, 0, "play Beelze-Beatdown on seat 1")
    act(state, 1, "pass")
    act(state, 2, "play Counter-Spell")
    pass_window(state)
    assert names(state, state.stacks[1]) == ["favor_4"]


def test_switcheroo_trades_the_two_most_recent_cards():
    state = table(
        hands={0: ["switcheroo"]},
        stacks={0: ["favor_2", "favor_1"], 1: ["favor_3", "favor_4"]},
    )
    act(state, 0, "play Switcheroo on seat 1")
    pass_window(state)
    assert names(state, state.stacks[0]) == ["favor_2", "favor_4"]
    assert names(state, state.stacks[1]) == ["favor_3", "favor_1"]
