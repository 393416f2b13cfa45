"""One scenario per Trash Cult ruling (TC-1..TC-17) and the general rulings it relies on.

Each position is set up from the JSON state form (tables.table) and driven through the
checked `apply` path by action label, as the gateway would.
"""

from __future__ import annotations

from collections import Counter

import pytest

from services.engines.core.errors import BadConfig
from services.engines.trash_cult import GAME
from services.engines.trash_cult.cards import ACTIVE_KINDS, KIND_NAMES
from tests.support.positions import act, legal_labels
from tests.trash_cult.tables import names, seat_names, table


def pass_window(state, seats):
    """Every seat in `seats` declines the Protection Spell window, in that order."""
    for seat in seats:
        assert state.to_act() == [seat]
        act(state, seat, "let it happen")


def resolve_all(state, seats):
    for seat in seats:
        assert state.to_act() == [seat]
        act(state, seat, "resolve the chaos card")


def test_tc1_decks_hold_96_active_and_16_chaos_cards():
    """TC-1: the active deck's and chaos deck's counts, every card with its own id."""
    state = GAME.new_state(None, 4, seed=1)
    kinds = state.config.kinds
    counts = Counter(KIND_NAMES[k] for k in kinds)
    assert len(kinds) == 112 and sum(1 for k in kinds if k < ACTIVE_KINDS) == 96
    for name in ("Raccoon", "Skunk", "Squirrel", "Rat"):
        assert counts[name] == 7
    for name in ("Pizza", "Pie", "Cookie", "Donut"):
        assert counts[name] == 10
    assert counts["Pigeon Thief"] == 6 and counts["Poison Their Punch"] == 4
    assert counts["Opossum Plushie"] == 2 and counts["Convert Hostage"] == 9
    assert counts["Protection Spell"] == 3 and counts["Hide"] == 4
    assert all(n == 2 for name, n in counts.items() if KIND_NAMES.index(name) >= ACTIVE_KINDS)
    assert sorted(state.deck) == list(range(96)) and sorted(state.chaos_deck) == list(range(96, 112))
    assert [KIND_NAMES[kinds[c]] for c in (0, 95, 96, 111)] == [
        "Raccoon",
        "Hide",
        "Hungry Bear",
        "Thunderstorm",
    ]


def test_tc1_deck_counts_are_config_fields():
    """TC-1: a sweep can change any count; ids stay unique and dense."""
    state = GAME.new_state({"hides": 0, "thunderstorms": 5, "cults": ["Rat", "Skunk"]}, 2, seed=1)
    kinds = state.config.kinds
    assert len(kinds) == 112 - 4 + 3
    assert KIND_NAMES.index("Hide") not in kinds
    assert sum(1 for k in kinds if KIND_NAMES[k] == "Thunderstorm") == 5


def test_tc2_pick_phase_runs_dealer_first_then_clockwise():
    """TC-2: with no cults fixed, the dealer (last seat) picks first; no cult twice;
    then five cards each are dealt and seat 0 plays first (G-1)."""
    state = GAME.new_state(None, 4, seed=3)
    assert all(len(h) == 0 for h in state.hands)
    order = []
    for name in ("Rat", "Raccoon", "Skunk"):
        seat = state.to_act()[0]
        order.append(seat)
        act(state, seat, f"lead the {name} cult")
        assert f"lead the {name} cult" not in legal_labels(state, state.to_act()[0])
    seat = state.to_act()[0]
    assert legal_labels(state, seat) == ["lead the Squirrel cult"]
    act(state, seat, "lead the Squirrel cult")
    assert [*order, seat] == [3, 0, 1, 2]
    assert state.cult == [0, 1, 2, 3]  # seat 0 Raccoon, 1 Skunk, 2 Squirrel, 3 Rat
    assert state.to_act() == [0] and state.turn == 1
    assert len(state.hands[0]) == 6 and all(len(h) == 5 for h in state.hands[1:])


def test_tc2_fixed_cults_skip_the_pick_phase_and_are_validated():
    """TC-2: the config may fix each seat's cult; unknown or repeated cults are refused."""
    state = GAME.new_state({"cults": ["Skunk", "Rat", "Raccoon"]}, 3, seed=0)
    assert state.cult == [1, 3, 0] and state.pending is None and state.to_act() == [0]
    with pytest.raises(BadConfig):
        GAME.make_config({"cults": ["Rat", "Rat"]})
    with pytest.raises(BadConfig):
        GAME.make_config({"cults": ["Rat", "Badger"]})
    with pytest.raises(BadConfig):
        GAME.new_state({"cults": ["Rat", "Skunk"]}, 3, seed=0)


@pytest.mark.parametrize(("players", "needed"), [(2, 6), (3, 5), (4, 4)])
def test_tc3_food_needed_depends_on_player_count(players, needed):
    """TC-3: 6 food for 2 players, 5 for 3, 4 for 4; one less is not enough."""
    for food, wins in ((needed - 1, False), (needed, True)):
        state = table(
            players,
            hands={0: ["Pizza", "Hide"]},
            members={0: ["Raccoon"]},
            shrine={0: ["Pizza"] * (food - 1)},
        )
        act(state, 0, "add Pizza")
        act(state, 0, "discard Hide")
        assert state.is_terminal() is wins
        assert state.winners() == ([0] if wins else [])


def test_tc4_draw_up_to_six_or_one():
    """TC-4: under 6 cards, draw up to 6; 6 or more, draw 1 (no hand limit)."""
    state = table(hands={0: ["Pie", "Pie"], 1: ["Hide"] * 2, 2: ["Pie"] * 7})
    act(state, 0, "discard Pie")
    act(state, 0, "discard Pie")
    assert state.to_act() == [1] and len(state.hands[1]) == 6
    act(state, 1, "discard Hide")
    act(state, 1, "discard Hide")
    assert state.to_act() == [2] and len(state.hands[2]) == 8


def test_tc4_both_decks_empty_stop_drawing():
    """TC-4: if the active deck and the trash are both empty, drawing stops; a trash pile
    that fills up later becomes the deck at the next draw."""
    state = table(players=2, hands={0: ["Pie", "Pie"]}, rest=1)  # seat 1 holds every other card
    assert not state.deck and not state.trash
    act(state, 0, "add Pie")
    act(state, 0, "add Pie")
    assert state.to_act() == [1] and len(state.hands[1]) == 94  # drew nothing
    act(state, 1, "discard Hide")
    act(state, 1, "discard Hide")
    assert state.to_act() == [0] and seat_names(state, "hands", 0) == ["Hide", "Hide"]
    assert not state.deck and not state.trash


def test_tc4_chaos_discard_reshuffles_when_the_chaos_deck_runs_out():
    """TC-4: the chaos discard becomes the new chaos deck the moment the deck runs out."""
    rest = [KIND_NAMES[k] for k in range(ACTIVE_KINDS, 22) for _ in range(2)]
    rest.remove("Garbage Trucks Broke Down")
    state = table(
        players=2, members={0: ["Raccoon"]}, chaos=["Garbage Trucks Broke Down"], chaos_discard=rest
    )
    assert len(state.chaos_deck) == 1
    act(state, 0, "snackrifice a Raccoon Cult Member")
    pass_window(state, [1])
    assert state.pending["step"] == "chaos"
    assert len(state.chaos_deck) == 15 and not state.chaos_discard  # reshuffled at once
    resolve_all(state, [0, 1])
    assert len(state.chaos_discard) == 1


def test_tc5_exactly_two_actions_then_the_turn_passes():
    """TC-5: two actions, no more, no less; the same action may be taken twice."""
    state = table(hands={0: ["Pizza", "Pizza", "Pizza"]})
    act(state, 0, "add Pizza")
    assert state.to_act() == [0] and state.actions_left == 1
    act(state, 0, "add Pizza")
    assert state.to_act() == [1] and state.active == 1
    assert seat_names(state, "shrine", 0) == ["Pizza", "Pizza"]


def test_tc5_pass_only_when_nothing_else_is_legal():
    """TC-5: passing an action is legal only when no other action is."""
    state = table(hands={0: ["Pizza"]})
    assert "pass" not in legal_labels(state, 0)
    act(state, 0, "add Pizza")
    assert legal_labels(state, 0) == ["pass"]
    act(state, 0, "pass")
    assert state.to_act() == [1]


def test_tc6_add_to_cult_places_each_card_by_cult():
    """TC-6: own animal -> Cult Member, other animal -> Hostage, own food -> Shrine,
    other food -> Stash."""
    state = table(hands={1: ["Skunk", "Rat", "Pie", "Pizza"]}, active=1)
    for label in ("add Skunk", "add Rat"):
        act(state, 1, label)
    assert state.to_act() == [2]
    state.active, state.actions_left = 1, 2
    for label in ("add Pie", "add Pizza"):
        act(state, 1, label)
    assert seat_names(state, "members", 1) == ["Skunk"] and state.tucked[1] == [-1]
    assert seat_names(state, "hostages", 1) == ["Rat"]
    assert seat_names(state, "shrine", 1) == ["Pie"]
    assert seat_names(state, "stash", 1) == ["Pizza"]


def test_tc7_snackrifice_payments():
    """TC-7: one Cult Member, two like Hostages or two like food; not one Hostage, not
    two unlike food; paid cards go to the trash."""
    state = table(
        members={0: ["Raccoon"]},
        hostages={0: ["Rat", "Rat", "Skunk"]},
        stash={0: ["Cookie", "Cookie", "Pie"]},
        shrine={0: ["Pizza", "Pizza"]},
        hands={0: ["Hide"]},
    )
    snacks = [label for label in legal_labels(state, 0) if label.startswith("snackrifice")]
    assert sorted(snacks) == [
        "snackrifice 2 Cookie",
        "snackrifice 2 Pizza",
        "snackrifice 2 Rat Hostages",
        "snackrifice a Raccoon Cult Member",
    ]
    act(state, 0, "snackrifice 2 Cookie")
    assert names(state, state.trash) == ["Cookie", "Cookie"]
    assert seat_names(state, "stash", 0) == ["Pie"]


def test_tc7_converted_member_takes_its_convert_card_to_the_trash():
    """TC-7: paying a converted Cult Member trashes its Convert Hostage card too; the perk
    is the paid animal's (Skunk), not the payer's cult."""
    state = table(members={0: ["Skunk+"]}, shrine={1: ["Pie"]})
    act(state, 0, "snackrifice a Skunk Cult Member")
    assert names(state, state.trash) == ["Convert Hostage", "Skunk"]
    assert state.pending == {"step": "protect", "seat": 1, "event": "snackrifice", "perk": 1, "target": -1}


def test_tc7_a_perk_without_target_is_still_legal_and_draws_chaos():
    """TC-7: nobody's Stash holds Pizza, yet the Raccoon Snackrifice is legal: cost paid,
    chaos drawn, the perk does nothing."""
    state = table(members={0: ["Raccoon", "Raccoon"]}, chaos=["Trash Swap"])
    act(state, 0, "snackrifice a Raccoon Cult Member")
    pass_window(state, [1, 2, 3])
    assert state.pending["step"] == "chaos" and state.pending["seat"] == 0
    assert seat_names(state, "members", 0) == ["Raccoon"] and names(state, state.trash) == ["Raccoon"]


def test_tc8_raccoon_perk_takes_your_food_from_a_stash():
    """TC-8: "your food" is the actor's food: a Rat leader using the Raccoon perk takes a
    Donut (not a Pizza) from an opponent's Stash into its Shrine, choosing the opponent."""
    state = table(
        hostages={3: ["Raccoon", "Raccoon"]},
        stash={0: ["Donut", "Pie"], 1: ["Donut"], 2: ["Pizza"]},
        active=3,
        chaos=["Garbage Trucks Broke Down"],
    )
    act(state, 3, "snackrifice 2 Raccoon Hostages")
    pass_window(state, [0, 1, 2])
    assert state.to_act() == [3]
    assert sorted(legal_labels(state, 3)) == ["take from seat 0", "take from seat 1"]
    act(state, 3, "take from seat 1")
    assert seat_names(state, "shrine", 3) == ["Donut"] and state.stash[1] == []


def test_tc8_skunk_perk_takes_from_a_shrine_into_your_stash():
    """TC-8: the Skunk perk moves one card of an opponent's Shrine into the actor's Stash;
    with one possible target the choice is made for the actor."""
    state = table(hostages={0: ["Skunk", "Skunk"]}, shrine={2: ["Cookie", "Cookie"]}, chaos=["Trash Swap"])
    act(state, 0, "snackrifice 2 Skunk Hostages")
    pass_window(state, [1, 2, 3])
    assert seat_names(state, "stash", 0) == ["Cookie"] and seat_names(state, "shrine", 2) == ["Cookie"]
    assert state.pending["step"] == "chaos"


def test_tc8_squirrel_perk_searches_the_deck_and_shuffles_it():
    """TC-8: the searcher sees the deck's cards (only while searching), takes any one into
    its hand, and the deck is shuffled."""
    state = table(players=2, hostages={0: ["Squirrel", "Squirrel"]}, chaos=["Trash Swap"])
    act(state, 0, "snackrifice 2 Squirrel Hostages")
    pass_window(state, [1])
    assert state.pending == {"step": "perk", "seat": 0, "perk": 2, "event": "snackrifice"}
    assert len(state.view(0)["pending"]["search"]) == len(state.deck)
    assert state.view(1)["pending"]["search"] == [] and state.view(None)["pending"]["search"] == []
    before = list(state.deck)
    act(state, 0, "take Opossum Plushie from the deck")
    assert seat_names(state, "hands", 0) == ["Opossum Plushie"]
    assert sorted(state.deck) != sorted(before) and len(state.deck) == len(before) - 1
    assert state.pending["step"] == "chaos"


def test_tc8_squirrel_search_shuffles_the_trash_its_own_cost_filled_into_an_empty_deck():
    """TC-4's FAQ: the trash becomes the deck the moment the deck runs out. Here both are
    empty until the Snackrifice pays 2 Squirrels into the trash: the search finds them."""
    state = table(players=2, hostages={0: ["Squirrel", "Squirrel"]}, rest=1, chaos=["Trash Swap"])
    assert not state.deck and not state.trash
    act(state, 0, "snackrifice 2 Squirrel Hostages")
    pass_window(state, [1])
    assert state.pending["step"] == "perk" and state.trash == []
    assert state.view(0)["pending"]["search"] == ["Squirrel", "Squirrel"]
    assert legal_labels(state, 0) == ["take Squirrel from the deck"]
    act(state, 0, "take Squirrel from the deck")
    assert seat_names(state, "hands", 0) == ["Squirrel"] and names(state, state.deck) == ["Squirrel"]


def test_tc8_squirrel_search_of_an_empty_deck_uses_the_trash():
    """An empty deck and a trash holding cards (the deck ran out while the trash was empty,
    and cards were trashed since): an Opossum Plushie's Squirrel search finds the trash's
    cards, the Plushie itself included."""
    state = table(players=2, hands={0: ["Opossum Plushie"]}, trash=["Cookie", "Hide"], rest=1)
    assert not state.deck
    act(state, 0, "Opossum Plushie: Squirrel perk, search the active deck for a card")
    pass_window(state, [1])
    assert sorted(legal_labels(state, 0)) == [
        "take Cookie from the deck",
        "take Hide from the deck",
        "take Opossum Plushie from the deck",
    ]
    act(state, 0, "take Cookie from the deck")
    assert seat_names(state, "hands", 0) == ["Cookie"] and state.trash == []
    assert names(state, state.deck) == ["Hide", "Opossum Plushie"]


def test_tc8_rat_perk_takes_your_food_from_the_trash():
    """TC-8: the Rat perk brings the actor's own food (Pizza for Raccoon) from the trash."""
    state = table(hostages={0: ["Rat", "Rat"]}, trash=["Donut", "Pizza"], chaos=["Trash Swap"])
    act(state, 0, "snackrifice 2 Rat Hostages")
    pass_window(state, [1, 2, 3])
    assert seat_names(state, "shrine", 0) == ["Pizza"]
    assert names(state, state.trash) == ["Donut", "Rat", "Rat"]


def test_tc9_snackrifice_order_pay_protect_perk_chaos_then_each_seat():
    """TC-9 / G-4: pay, Protection Spell window (every other seat, in turn order from the
    actor), perk, chaos revealed, then each seat from the actor hides or resolves."""
    state = table(hostages={1: ["Rat", "Rat"]}, trash=["Pie"], active=1, chaos=["Thunderstorm"])
    act(state, 1, "snackrifice 2 Rat Hostages")
    assert names(state, state.trash) == ["Pie", "Rat", "Rat"]  # paid first
    pass_window(state, [2, 3, 0])
    assert seat_names(state, "shrine", 1) == ["Pie"]  # perk before chaos
    assert state.pending["step"] == "chaos"
    assert KIND_NAMES[state.config.kinds[state.pending["card"]]] == "Thunderstorm"
    resolve_all(state, [1, 2, 3])
    assert state.to_act() == [0]
    act(state, 0, "resolve the chaos card")
    assert state.shrine[1] == [] and state.pending is None  # the chaos hit the actor too
    assert state.to_act() == [1] and state.actions_left == 1


def test_tc10_protection_spell_cancels_the_perk_but_not_cost_or_chaos():
    """TC-10: a seat other than the actor plays it from hand; the perk is cancelled, the
    cost stays paid, chaos still comes, and the window closes (one per event). Seats
    without the card are asked too, with "let it happen" as their one choice."""
    state = table(
        hostages={0: ["Rat", "Rat"]},
        trash=["Pizza"],
        hands={2: ["Protection Spell"], 3: ["Protection Spell"]},
        chaos=["Trash Swap"],
    )
    act(state, 0, "snackrifice 2 Rat Hostages")
    assert legal_labels(state, 1) == ["let it happen"]
    act(state, 1, "let it happen")
    assert sorted(legal_labels(state, 2)) == ["let it happen", "play Protection Spell"]
    act(state, 2, "play Protection Spell")
    assert state.shrine[0] == [] and state.pending["step"] == "chaos"  # no perk, seat 3 not asked
    assert names(state, state.trash) == ["Pizza", "Protection Spell", "Rat", "Rat"]
    assert seat_names(state, "hands", 3) == ["Protection Spell"]


def test_tc10_protection_spell_is_not_an_action():
    """TC-10: it cannot be played on one's own turn, only discarded."""
    state = table(hands={0: ["Protection Spell"]})
    assert legal_labels(state, 0) == ["discard Protection Spell"]


def test_tc11_either_or_offers_only_options_payable_in_full():
    """TC-11: with 3 animals and 1 food, Hungry Bear offers both; the seat then picks the
    cards, one at a time, among distinct choices."""
    state = table(
        members={0: ["Raccoon"], 1: ["Skunk", "Rat+"]},
        hostages={1: ["Rat"]},
        stash={1: ["Cookie"]},
        chaos=["Hungry Bear"],
    )
    act(state, 0, "snackrifice a Raccoon Cult Member")
    pass_window(state, [1, 2, 3])
    assert legal_labels(state, 0) == ["resolve the chaos card"]  # nothing left to lose
    act(state, 0, "resolve the chaos card")
    assert sorted(legal_labels(state, 1)) == ["lose animals", "lose food"]
    act(state, 1, "lose animals")
    assert sorted(legal_labels(state, 1)) == [
        "trash a Rat Cult Member",
        "trash a Rat Hostage",
        "trash a Skunk Cult Member",
    ]
    act(state, 1, "trash a Rat Cult Member")  # the converted one: its Convert card goes too
    assert "Convert Hostage" in names(state, state.trash)
    act(state, 1, "trash a Skunk Cult Member")
    assert state.members[1] == [] and seat_names(state, "hostages", 1) == ["Rat"]
    assert state.to_act() == [2]


def test_tc12_opossum_plushie_uses_a_perk_without_paying_or_chaos():
    """TC-12: any perk, nothing paid, no chaos; the Plushie goes to the trash (TC-16)."""
    state = table(hands={0: ["Opossum Plushie"]}, trash=["Pizza"])
    act(state, 0, "Opossum Plushie: Rat perk, take your food from the trash pile")
    pass_window(state, [1, 2, 3])
    assert seat_names(state, "shrine", 0) == ["Pizza"] and names(state, state.trash) == ["Opossum Plushie"]
    assert state.pending is None and state.to_act() == [0] and state.actions_left == 1
    assert len(state.chaos_deck) == 16


def test_tc13_pigeon_thief_steals_at_random_and_may_play_it_free():
    """TC-13: a random card from the chosen opponent; the thief may play it at once as a
    free action, which does not count against the two actions."""
    state = table(hands={0: ["Pigeon Thief"], 2: ["Pizza"]})
    assert legal_labels(state, 0) == ["Pigeon Thief: rob seat 2", "discard Pigeon Thief"]  # others empty
    act(state, 0, "Pigeon Thief: rob seat 2")
    assert state.pending["step"] == "steal" and state.hands[2] == []
    assert state.view(0)["pending"]["stolen"] == "Pizza" and state.view(2)["pending"]["stolen"] == ""
    assert legal_labels(state, 0) == ["keep the stolen card", "add Pizza"]
    act(state, 0, "add Pizza")
    assert seat_names(state, "shrine", 0) == ["Pizza"] and state.actions_left == 1
    assert state.to_act() == [0]


def test_tc13_a_stolen_defense_card_can_only_be_kept():
    """TC-13: the thief is always asked, so others learn nothing; a Hide is only kept."""
    state = table(hands={0: ["Pigeon Thief"], 1: ["Hide"]})
    act(state, 0, "Pigeon Thief: rob seat 1")
    assert legal_labels(state, 0) == ["keep the stolen card"]
    act(state, 0, "keep the stolen card")
    assert seat_names(state, "hands", 0) == ["Hide"]


def test_tc14_poison_their_punch_trashes_every_cult_member_but_not_hostages():
    """TC-14: natural and converted members go, with their Convert cards; Hostages stay."""
    state = table(
        hands={0: ["Poison Their Punch"]}, members={2: ["Squirrel", "Rat+"]}, hostages={2: ["Skunk"]}
    )
    act(state, 0, "Poison Their Punch: poison seat 2")
    pass_window(state, [1, 2, 3])
    assert state.members[2] == [] and state.tucked[2] == []
    assert seat_names(state, "hostages", 2) == ["Skunk"]
    assert names(state, state.trash) == ["Convert Hostage", "Poison Their Punch", "Rat", "Squirrel"]


def test_tc15_convert_hostage_turns_a_hostage_into_a_cult_member():
    """TC-15: the Convert Hostage card is tucked under the new Cult Member."""
    state = table(hands={0: ["Convert Hostage"]}, hostages={0: ["Rat", "Skunk"]})
    labels = legal_labels(state, 0)
    assert "Convert Hostage: convert a Rat" in labels and "Convert Hostage: convert a Skunk" in labels
    act(state, 0, "Convert Hostage: convert a Rat")
    assert seat_names(state, "members", 0) == ["Rat"] and seat_names(state, "hostages", 0) == ["Skunk"]
    assert KIND_NAMES[state.config.kinds[state.tucked[0][0]]] == "Convert Hostage"
    assert state.view(None)["seats"][0]["converted"] == [True]


def test_tc16_discard_one_card_to_the_face_up_trash():
    """TC-16: a discard is one action, one card; the trash pile is public."""
    state = table(hands={0: ["Hide", "Pizza"]})
    act(state, 0, "discard Hide")
    assert seat_names(state, "hands", 0) == ["Pizza"] and state.actions_left == 1
    assert state.view(3)["trash"] == ["Hide"]


def test_tc17_winning_is_checked_only_at_the_end_of_ones_own_turn():
    """TC-17: seat 1 holds a full Shrine and a Cult Member during seat 0's turn but wins
    only when its own turn ends, and only if it still qualifies then."""
    state = table(
        members={1: ["Skunk"]},
        shrine={1: ["Pie"] * 4},
        hands={0: ["Hide", "Hide"], 1: ["Cookie", "Cookie"]},
    )
    act(state, 0, "discard Hide")
    act(state, 0, "discard Hide")
    assert not state.is_terminal() and state.to_act() == [1]
    act(state, 1, "add Cookie")
    assert not state.is_terminal()
    act(state, 1, "add Cookie")
    assert state.is_terminal() and state.winners() == [1] and state.returns() == [0, 1, 0, 0]


def test_tc17_no_cult_member_no_win():
    """TC-17: a full Shrine is not enough without at least one Cult Member."""
    state = table(shrine={0: ["Pizza"] * 3}, hands={0: ["Pizza", "Hide"]})
    act(state, 0, "add Pizza")
    act(state, 0, "discard Hide")
    assert not state.is_terminal() and state.to_act() == [1]


def test_g5_turn_cap_ends_in_a_draw():
    """G-5: when max_turns turns have begun, the game ends with no winner."""
    state = table(players=2, hands={0: ["Hide", "Hide"]}, config={"max_turns": 1})
    act(state, 0, "discard Hide")
    act(state, 0, "discard Hide")
    assert state.is_terminal() and state.winners() == [] and state.returns() == [0.5, 0.5]
    assert state.to_act() == [] and state.legal_actions(1) == []
