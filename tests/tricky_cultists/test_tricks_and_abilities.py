"""Trick play (TK-6), the four suit abilities and the book's examples (TK-7), round end (TK-9)."""

from __future__ import annotations

import pytest

from services.engines.core.errors import IllegalAction
from tests.support.positions import act, legal_labels

from .setups import card, play, round_position

# Three cards each, seven tricks already won: a position in the middle of a round.
MID_HANDS = (
    ["Red 5", "Blue 7", "Green 2"],
    ["Red 9", "Red 1", "Purple 3"],
    ["Blue 1", "Blue 2", "Green 3"],
    ["Red 12", "Blue 9", "Blue 3"],
)
MID_TOPS = (2, 2, 2, 1)


def mid_round(**kw):
    kw.setdefault("hands", MID_HANDS)
    kw.setdefault("tops", MID_TOPS)
    return round_position(**kw)


def test_follow_suit_if_able_else_play_anything():
    """The book: each player must follow the led suit if able; a void player may play any card."""
    state = mid_round()
    assert legal_labels(state, 0) == ["play Blue 7", "play Red 5", "play Green 2"]
    play(state, "Red 5")
    assert legal_labels(state, 1) == ["play Red 1", "play Red 9"]
    with pytest.raises(IllegalAction, match="not legal"):
        state.apply(1, card("Purple 3"))
    play(state, "Red 9")
    assert legal_labels(state, 2) == ["play Blue 1", "play Blue 2", "play Green 3"]


def test_tk6_highest_led_card_wins_without_trump_and_tops_the_stack():
    """TK-6: no trump at round start; the highest led card wins and lies on top of the trick."""
    state = mid_round()
    before = len(state.won[3])
    play(state, "Red 5", "Red 9", "Green 3", "Red 12")
    pile = state.won[3]
    assert len(pile) == before + 4 and pile[before] == card("Red 12")
    assert sorted(pile[before + 1 :]) == sorted([card("Red 5"), card("Red 9"), card("Green 3")])
    assert state.view(None)["seats"][3]["tricks"][-1]["name"] == "Red 12"


def test_tk7_trump_wins_but_the_led_suits_second_card_triggers():
    """The book's example: a trump takes the trick; the second-highest led card still triggers."""
    state = mid_round(trump="Green")
    play(state, "Red 5", "Red 9", "Green 3", "Red 12")
    assert state.won[2][-4] == card("Green 3")  # seat 2's trump tops the trick
    assert (state.phase, state.actor) == ("red", 1)  # Red 9 is second of the led suit
    assert state.abilities == [0, 1, 0, 0]


def test_tk7_red_sets_trump_from_none_and_must_choose_a_suit():
    """TK-7 Red: set the trump suit to any suit; there is no trump before and no pass."""
    state = mid_round()
    assert state.trump == -1 and state.view(None)["trump"] == ""
    play(state, "Red 5", "Red 9", "Green 3", "Red 12")
    assert legal_labels(state, 1) == [
        "set trump Blue",
        "set trump Red",
        "set trump Green",
        "set trump Purple",
    ]
    act(state, 1, "set trump Purple")
    assert state.view(None)["trump"] == "Purple"
    assert (state.phase, state.actor) == ("play", 3)  # the trick's winner leads next


def test_tk7_red_changes_trump_but_never_removes_it():
    """The book: once declared, some trump stays; Red may change it (or keep it) only."""
    state = mid_round(trump="Blue")
    play(state, "Red 5", "Red 9", "Green 3", "Red 12")
    labels = legal_labels(state, 1)
    assert labels == ["set trump Blue", "set trump Red", "set trump Green", "set trump Purple"]
    act(state, 1, "set trump Red")
    assert state.trump == 1


def test_tk7_a_lone_led_card_triggers_its_own_ability():
    """The book's example: a Purple lead nobody follows is highest and second: the leader triggers."""
    state = mid_round(leader=1)
    play(state, "Purple 3", "Blue 1", "Blue 9", "Blue 7")
    assert state.won[1][-4] == card("Purple 3")
    assert (state.phase, state.actor) == ("purple", 1)


def test_tk7_purple_gives_one_suspicion_to_any_player_yourself_included():
    """TK-7 Purple: mandatory (no pass); any seat, the triggering one too."""
    state = mid_round(leader=1, suspicion=[1, 0, 2, 0])
    play(state, "Purple 3", "Blue 1", "Blue 9", "Blue 7")
    assert legal_labels(state, 1) == [f"give seat {s} a Suspicion" for s in range(4)]
    act(state, 1, "give seat 1 a Suspicion")
    assert state.suspicion == [1, 1, 2, 0]


def test_tk7_green_may_take_one_codex_card_into_hand():
    """TK-7 Green: take one Codex card (hand sizes drift) or pass."""
    state = mid_round(
        hands=(["Green 2", "Blue 7"], ["Green 9", "Red 1"], ["Green 12", "Blue 2"], ["Red 12", "Purple 1"]),
        tops=(2, 2, 2, 2),
        codex={1: ["Red 13", "Blue 13", "Purple 13"]},
    )
    play(state, "Green 2", "Green 9", "Green 12", "Red 12")
    assert (state.phase, state.actor) == ("green", 1)
    assert legal_labels(state, 1) == [
        "take Blue 13 from the Codex",
        "take Red 13 from the Codex",
        "take Purple 13 from the Codex",
        "pass",
    ]
    act(state, 1, "take Red 13 from the Codex")
    assert sorted(state.hands[1]) == sorted([card("Red 1"), card("Red 13")])
    assert state.codex[1] == [card("Blue 13"), card("Purple 13")]
    assert state.view(2)["seats"][1]["hand_size"] == 2
    assert state.view(2)["codex"] != state.view(1)["codex"]  # each sees only their own Codex


def test_tk7_green_with_an_empty_codex_triggers_but_asks_nothing():
    """TK-7 Green: with no Codex card there is nothing to take; the trigger still counts."""
    state = mid_round(
        hands=(
            ["Green 2", "Blue 7"],
            ["Green 9", "Red 1", "Red 13", "Blue 13", "Purple 13"],  # took all three earlier
            ["Green 12", "Blue 2"],
            ["Red 12", "Purple 1"],
        ),
        tops=(2, 2, 2, 2),
        codex={1: []},
    )
    play(state, "Green 2", "Green 9", "Green 12", "Red 12")
    assert (state.phase, state.actor) == ("play", 2)
    assert state.abilities == [0, 1, 0, 0]


def test_tk7_blue_may_swap_one_hand_card_with_one_codex_card():
    """TK-7 Blue: any hand card for any Codex card, or pass."""
    state = mid_round(
        hands=(["Blue 7", "Green 2"], ["Blue 9", "Red 1"], ["Blue 12", "Green 3"], ["Red 12", "Purple 1"]),
        tops=(2, 2, 2, 2),
        codex={1: ["Red 13", "Blue 13", "Purple 13"]},
    )
    play(state, "Blue 7", "Blue 9", "Blue 12", "Red 12")
    assert (state.phase, state.actor) == ("blue", 1)
    labels = legal_labels(state, 1)
    assert len(labels) == 1 * 3 + 1 and labels[-1] == "pass"
    act(state, 1, "swap Red 1 for Codex Purple 13")
    assert state.hands[1] == [card("Purple 13")]
    assert state.codex[1] == sorted([card("Red 1"), card("Blue 13"), card("Red 13")])


def test_tk7_optional_abilities_may_be_passed():
    """TK-7: Green and Blue say "may"; passing changes nothing and play goes on."""
    state = mid_round(
        hands=(["Blue 7", "Green 2"], ["Blue 9", "Red 1"], ["Blue 12", "Green 3"], ["Red 12", "Purple 1"]),
        tops=(2, 2, 2, 2),
    )
    play(state, "Blue 7", "Blue 9", "Blue 12", "Red 12")
    hands, codex = [h[:] for h in state.hands], [c[:] for c in state.codex]
    act(state, 1, "pass")
    assert state.hands == hands and state.codex == codex
    assert (state.phase, state.actor) == ("play", 2)


def test_tk9_round_ends_after_the_first_trick_that_empties_a_hand():
    """TK-9: a seat with a Green card left over does not keep the round going."""
    state = round_position(
        hands=(["Blue 13", "Red 2"], ["Blue 2"], ["Blue 3"], ["Blue 4"]),
        codex={0: ["Green 1", "Green 5"]},
    )
    play(state, "Blue 13", "Blue 2", "Blue 3")
    assert state.round == 0
    play(state, "Blue 4")  # seat 0 still holds Red 2, the others are empty
    assert (state.round, state.phase) == (1, "draft")
    assert len(state.breakdown) == 1


def test_tk9_the_last_tricks_ability_resolves_before_scoring():
    """TK-9: the round ends at the end of the trick, ability included: Purple lands before step 1."""
    state = round_position(
        hands=(["Purple 2"], ["Purple 1"], ["Blue 3"], ["Blue 4"]),
        agendas=(None, "Clean Hands", None, None),
        suspicion=[1, 0, 1, 1],
    )
    play(state, "Purple 2", "Purple 1", "Blue 3", "Blue 4")
    assert state.final_trick and (state.phase, state.actor) == ("purple", 1)
    act(state, 1, "give seat 1 a Suspicion")
    assert state.breakdown[0][1][0] == 0  # Clean Hands now ties for fewest (TK-3)
    assert state.round == 1


def test_tk12_a_final_trick_purple_counts_for_clean_hands_and_the_suspicion_discard():
    """TK-12: the last trick is finished in full before agendas are judged: the Purple
    given there makes seat 2 strictly the most suspicious, so it discards at step 4, and
    it costs seat 1's Clean Hands nothing while giving seat 3 the strict fewest."""
    state = round_position(
        hands=(["Purple 2"], ["Purple 1"], ["Blue 3"], ["Blue 4"]),
        agendas=(None, None, None, "Clean Hands"),
        suspicion=[1, 1, 1, 0],
    )
    play(state, "Purple 2", "Purple 1", "Blue 3", "Blue 4")
    assert state.final_trick and (state.phase, state.actor) == ("purple", 1)
    assert len(state.breakdown) == 0  # nothing is judged while the ability is pending
    act(state, 1, "give seat 2 a Suspicion")
    assert state.agenda_met[0][3] == [7, True]  # judged with the Purple already given
    assert state.breakdown[0][3][0] == 2
    assert state.suspicion == [1, 1, 0, 0]  # seat 2 held 2, strictly the most: discarded
    assert [state.breakdown[0][s][3] for s in range(4)] == [-1, -1, 0, 0]


def test_tk12_a_final_trick_purple_can_break_clean_hands():
    """TK-12: the same Purple (worth 2 here) given to the Clean Hands holder fails it."""
    state = round_position(
        hands=(["Purple 2"], ["Purple 1"], ["Blue 3"], ["Blue 4"]),
        agendas=(None, None, None, "Clean Hands"),
        suspicion=[1, 1, 1, 0],
        config={"purple_suspicion": 2},
    )
    play(state, "Purple 2", "Purple 1", "Blue 3", "Blue 4")
    act(state, 1, "give seat 3 a Suspicion")
    assert state.agenda_met[0][3] == [7, False]
    assert state.breakdown[0][3][0] == -1
