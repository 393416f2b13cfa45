"""Scoring: the eight agendas (TK-3), trick values and bonus (TK-6), the steal (TK-8),
Suspicion (TK-10), the winner (TK-11) and the turn cap (G-5).

Every scenario starts at the last trick of a round (setups.round_position): seat 0 leads
Blue 13 and wins it, seat 3's Blue 4 triggers Blue with nothing left to swap, and the round
is scored. With the default `tops` the seats end with 4, 2, 2 and 2 tricks.
"""

from __future__ import annotations

import pytest

from tests.support.positions import act, legal_labels

from .setups import LAST_HANDS, play, round_position

AGENDA, TRICKS, BONUS, SUSPICION = range(4)


def finish(**kw):
    state = round_position(**kw)
    play(state, *(h[0] for h in LAST_HANDS))
    return state


def agenda_vp(state, seat):
    return state.breakdown[0][seat][AGENDA]


def seat_with(agenda, seat):
    return tuple(agenda if s == seat else None for s in range(4))


AGENDA_CASES = [
    # (case, agenda, seat, position, expected VP)  TK-3
    ("lead first always met", "Lead First Trick", 1, {}, 1),
    ("bonus suit met", "Choose Bonus Suit", 1, {"bonus": "Blue", "tops": (3, ["Blue 5", "Blue 6"], 2, 2)}, 1),
    ("bonus suit failed", "Choose Bonus Suit", 1, {"bonus": "Blue"}, -1),
    ("most tricks met", "Win Most Tricks", 0, {}, 3),
    ("most tricks failed", "Win Most Tricks", 1, {}, -2),
    ("most tricks tied", "Win Most Tricks", 1, {"tops": (2, 3, 2, 2)}, 0),
    ("no tricks met", "Win No Tricks", 1, {"tops": (3, 0, 3, 3)}, 2),
    ("no tricks failed", "Win No Tricks", 1, {}, -2),
    ("last trick met", "Win Last Trick", 0, {}, 2),
    ("last trick failed", "Win Last Trick", 1, {}, -1),
    ("exactly three met", "Win Exactly Three", 1, {"tops": (2, 3, 2, 2)}, 3),
    ("exactly three failed under", "Win Exactly Three", 2, {}, -1),
    ("exactly three failed over", "Win Exactly Three", 0, {}, -1),
    ("most abilities met", "Trigger Most Abilities", 1, {"abilities": [0, 3, 1, 1]}, 2),
    ("most abilities failed", "Trigger Most Abilities", 0, {"abilities": [0, 3, 1, 1]}, -1),
    ("most abilities tied", "Trigger Most Abilities", 1, {"abilities": [0, 2, 1, 1]}, 0),  # seat 3 gets 2
    ("clean hands met", "Clean Hands", 1, {"suspicion": [1, 0, 1, 1]}, 2),
    ("clean hands failed", "Clean Hands", 2, {"suspicion": [1, 0, 1, 1]}, -1),
    ("clean hands tied", "Clean Hands", 1, {"suspicion": [0, 0, 1, 1]}, 0),
]


@pytest.mark.parametrize(
    ("agenda", "seat", "setup", "expected"),
    [case[1:] for case in AGENDA_CASES],
    ids=[case[0] for case in AGENDA_CASES],
)
def test_tk3_each_agenda_met_failed_or_tied(agenda, seat, setup, expected):
    """TK-3: success VP, failure VP, and a deciding tie resolves the agenda neither way."""
    state = finish(agendas=seat_with(agenda, seat), **setup)
    assert agenda_vp(state, seat) == expected


def test_tk3_declining_scores_no_agenda_points():
    """TK-4: a seat without an agenda gains and loses nothing at step 1."""
    state = finish()
    assert [agenda_vp(state, s) for s in range(4)] == [0, 0, 0, 0]


def test_tk6_a_trick_is_worth_its_top_card_and_the_bonus_counts_the_top_cards_suit():
    """TK-6: trick value = top card's value; +1 per trick whose top card is of the bonus suit."""
    state = finish(tops=(["Red 1", "Red 5", "Green 13"], 2, 2, 2), bonus="Red")
    assert state.breakdown[0][0][TRICKS] == 6 + 4 + 0 + 0  # Blue 13 tops the last trick
    assert state.breakdown[0][0][BONUS] == 2


def test_tk6_a_trick_won_by_trump_is_of_the_trumps_suit():
    """TK-6: a Red-led trick taken by a Green trump counts as a Green trick for the bonus."""
    state = round_position(
        hands=(["Red 13"], ["Red 2"], ["Green 2"], ["Red 4"]),
        tops=(4, 3, 0, 2),
        trump="Green",
        bonus="Green",
        agendas=(None, None, "Choose Bonus Suit", None),
    )
    play(state, "Red 13", "Red 2", "Green 2", "Red 4")
    act(state, 3, "set trump Green")  # Red 4 is second of the led suit (TK-7)
    assert state.breakdown[0][2][BONUS] == 1
    assert state.breakdown[0][2][AGENDA] == 1


def test_tk8_win_no_tricks_steals_one_opposing_trick_after_agendas_are_judged():
    """TK-8 and the book: the steal comes after step 1, so the robbed seat's agenda stands."""
    state = finish(
        tops=(["Red 1", "Green 12"], 0, ["Purple 5", "Green 11"], 5),
        agendas=("Win Exactly Three", "Win No Tricks", None, None),
    )
    assert (state.phase, state.actor) == ("steal", 1)
    assert agenda_vp(state, 0) == 3 and agenda_vp(state, 1) == 2  # judged before the steal
    labels = legal_labels(state, 1)
    assert labels[-1] == "pass"
    offered = {label.removeprefix("steal the trick won by ") for label in labels[:-1]}
    assert offered == {"Red 1", "Green 12", "Blue 13", "Purple 5", "Green 11"}  # seats 0 and 2 only
    assert not offered & {state.config.card_names[t] for t in state.won[3][::4]}  # not the partner's
    act(state, 1, "steal the trick won by Red 1")
    entry = state.breakdown[0]
    assert entry[1][TRICKS] == 6  # Red 1's value travels with the trick
    assert entry[0][TRICKS] == 1 + 0  # Green 12 and the last trick's Blue 13 remain
    assert entry[0][AGENDA] == 3  # Win Exactly Three still met: no retroactive effect
    assert state.round == 1


def test_tk8_the_steal_may_be_passed():
    """The book: the stealer "may" steal; passing keeps every trick where it is."""
    state = finish(tops=(3, 0, 3, 3), agendas=seat_with("Win No Tricks", 1))
    act(state, 1, "pass")
    assert state.breakdown[0][1][TRICKS] == 0 and state.round == 1


def test_tk13_a_stolen_bonus_suit_trick_carries_its_round_bonus_point_to_the_thief():
    """TK-13: the stolen Red-topped trick moves its card value and its Round Bonus point."""
    state = finish(
        tops=(["Red 1", "Green 12"], 0, ["Purple 5", "Red 3"], 5),
        bonus="Red",
        agendas=(None, "Win No Tricks", None, None),
        config={"bonus_per_trick": 2},
    )
    assert (state.phase, state.actor) == ("steal", 1)
    act(state, 1, "steal the trick won by Red 1")
    entry = state.breakdown[0]
    assert (entry[1][TRICKS], entry[1][BONUS]) == (6, 2)  # Red 1's value and its bonus, both
    assert (entry[0][TRICKS], entry[0][BONUS]) == (1 + 0, 0)  # Green 12 and Blue 13 stay
    assert (entry[2][TRICKS], entry[2][BONUS]) == (4 + 5, 2)  # the partner's Red 3 is not touched
    assert sum(entry[1]) == 2 + 6 + 2  # agenda, the stolen value, the stolen bonus


def test_agendas_judged_each_round_are_recorded_met_failed_or_tied():
    """The state keeps, per scored round, each seat's agenda kind and whether it was met:
    what sweeps count for agenda success rates; the view names it for every round."""
    state = finish(
        agendas=("Win Most Tricks", "Win Last Trick", None, "Trigger Most Abilities"),
        abilities=[0, 2, 0, 1],
    )  # seat 3's Blue 4 triggers the last trick's ability: 2 each, a tie
    assert state.agenda_met == [[[2, True], [4, False], [-1, None], [6, None]]]
    seats = state.view(None)["scores"][0]["seats"]
    assert [(s["agenda_kept"], s["agenda_result"]) for s in seats] == [
        ("Win Most Tricks", "met"),
        ("Win Last Trick", "failed"),
        ("", ""),
        ("Trigger Most Abilities", "tied"),
    ]
    assert state.to_json()["agenda_met"] == state.agenda_met


def test_tk10_the_strictly_highest_holder_discards_all_suspicion_before_penalties():
    """TK-10 / scoring steps 4-5: the most Suspicion is discarded; the rest carry over."""
    state = finish(suspicion=[3, 1, 2, 0])
    assert [state.breakdown[0][s][SUSPICION] for s in range(4)] == [0, -1, -2, 0]
    assert state.suspicion == [0, 1, 2, 0]  # carried into round 2
    assert state.round == 1 and state.phase == "draft"


def test_tk10_a_tie_for_most_suspicion_discards_nothing():
    """TK-10: two seats tied for the most: nobody has the most, nobody discards."""
    state = finish(suspicion=[2, 2, 1, 0])
    assert [state.breakdown[0][s][SUSPICION] for s in range(4)] == [-2, -2, -1, 0]
    assert state.suspicion == [2, 2, 1, 0]


def test_tk10_clean_hands_is_judged_before_the_discard():
    """TK-3 / TK-10: Clean Hands compares Suspicion at step 1, before step 4 discards."""
    state = finish(suspicion=[3, 1, 2, 2], agendas=seat_with("Clean Hands", 1))
    assert agenda_vp(state, 1) == 2
    assert state.suspicion == [0, 1, 2, 2]


def test_tk11_higher_team_total_wins_after_the_last_round():
    """TK-11: after round 4 the team with the higher total wins; both partners are winners."""
    state = finish(round_index=3, tops=(0, 3, 3, 3))
    assert state.is_terminal() and not state.capped
    teams = state.team_totals()
    assert teams[1] > teams[0]
    assert state.winners() == [1, 3]
    assert state.returns() == [0.0, 1.0, 0.0, 1.0]


def test_tk11_equal_team_totals_are_a_draw():
    """TK-11: equal totals draw; partners share 0.5 each."""
    probe = finish(round_index=3)
    gap = probe.team_totals()[0] - probe.team_totals()[1]
    earlier = [[[0, 0, 0, 0] for _ in range(4)] for _ in range(3)]
    earlier[0][1][TRICKS] = gap  # round 1: seat 1's tricks make up the difference
    state = finish(round_index=3, breakdown=earlier)
    assert state.team_totals()[0] == state.team_totals()[1]
    assert state.is_terminal() and state.winners() == []
    assert state.returns() == [0.5] * 4


def test_scores_add_up_from_their_parts():
    """The view's per-seat score and team totals are sums of the breakdown parts."""
    state = finish(
        tops=(["Red 1"], 3, 3, 2), suspicion=[0, 2, 1, 1], agendas=("Win Most Tricks", None, None, None)
    )
    view = state.view(None)
    for s in range(4):
        parts = state.breakdown[0][s]
        assert view["scores"][0]["seats"][s]["total"] == sum(parts)
        assert view["seats"][s]["score"] == sum(parts)
    assert view["team_scores"] == [
        sum(map(sum, (state.breakdown[0][0], state.breakdown[0][2]))),
        sum(map(sum, (state.breakdown[0][1], state.breakdown[0][3]))),
    ]


def test_g5_turn_cap_ends_the_game_as_a_draw():
    """G-5: when the next trick would pass max_turns the game ends, no winner, 0.5 each."""
    state = round_position(
        hands=(["Blue 13", "Red 1"], ["Blue 2", "Red 2"], ["Blue 3", "Red 3"], ["Blue 4", "Red 4"]),
        tops=(2, 2, 2, 2),
        config={"max_turns": 9},
    )
    assert state.turn == 9
    play(state, "Blue 13", "Blue 2", "Blue 3")
    act(state, 3, "play Blue 4")
    act(state, 3, "pass")  # Blue: seat 3 may swap; the trick ends
    assert state.is_terminal() and state.capped
    assert state.winners() == [] and state.returns() == [0.5] * 4
    assert state.view(None)["capped"]
