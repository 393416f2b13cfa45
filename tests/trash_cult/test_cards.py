"""One scenario per Trash Cult action card and chaos card, and the rulebook's FAQ cases.

Positions come from the JSON state form (tables.table); every move goes through the
checked `apply` path by label.
"""

from __future__ import annotations

from services.engines.trash_cult.cards import KIND_NAMES
from tests.support.positions import act, legal_labels
from tests.trash_cult.tables import names, seat_names, table


def snackrifice_into_chaos(chaos: str, players: int = 4, **zones):
    """Seat 0 pays two Rat Hostages (the Rat perk: nothing in the trash to take) and the
    window passes, leaving `chaos` for every seat to answer, seat 0 first (TC-9)."""
    hostages = {0: ["Rat", "Rat"], **zones.pop("hostages", {})}
    state = table(players, hostages=hostages, chaos=[chaos], **zones)
    act(state, 0, "snackrifice 2 Rat Hostages")
    for seat in range(1, players):
        act(state, seat, "let it happen")
    assert state.pending["step"] == "chaos" and state.to_act() == [0]
    assert KIND_NAMES[state.config.kinds[state.pending["card"]]] == chaos
    return state


def resolve(state, seats):
    for seat in seats:
        assert state.to_act() == [seat]
        act(state, seat, "resolve the chaos card")


# --- action cards ------------------------------------------------------------------------
def test_pigeon_thief_free_play_of_a_stolen_action_card():
    """Pigeon Thief (TC-13): a stolen Poison Their Punch may be played at once, free;
    its own Protection Spell window follows (TC-10)."""
    state = table(hands={0: ["Pigeon Thief"], 1: ["Poison Their Punch"]}, members={2: ["Squirrel"]})
    act(state, 0, "Pigeon Thief: rob seat 1")
    assert legal_labels(state, 0) == [
        "keep the stolen card",
        "Poison Their Punch: poison seat 1",
        "Poison Their Punch: poison seat 2",
        "Poison Their Punch: poison seat 3",
    ]
    act(state, 0, "Poison Their Punch: poison seat 2")
    for seat in (1, 2, 3):
        act(state, seat, "let it happen")
    assert state.members[2] == [] and state.actions_left == 1 and state.to_act() == [0]
    assert names(state, state.trash) == ["Pigeon Thief", "Poison Their Punch", "Squirrel"]


def test_poison_their_punch_answered_by_protection_spell():
    """Poison Their Punch (TC-14, TC-10): the target's Protection Spell saves its members."""
    state = table(hands={0: ["Poison Their Punch"], 2: ["Protection Spell"]}, members={2: ["Squirrel"]})
    act(state, 0, "Poison Their Punch: poison seat 2")
    act(state, 1, "let it happen")
    act(state, 2, "play Protection Spell")
    assert seat_names(state, "members", 2) == ["Squirrel"] and state.pending is None
    assert names(state, state.trash) == ["Poison Their Punch", "Protection Spell"]


def test_opossum_plushie_squirrel_perk_and_its_protection():
    """Opossum Plushie (TC-12): a Protection Spell cancels its perk too (TC-10)."""
    state = table(hands={0: ["Opossum Plushie"], 3: ["Protection Spell"]})
    act(state, 0, "Opossum Plushie: Squirrel perk, search the active deck for a card")
    act(state, 1, "let it happen")
    act(state, 2, "let it happen")
    act(state, 3, "play Protection Spell")
    assert state.pending is None and state.hands[0] == [] and state.actions_left == 1
    assert len(state.chaos_deck) == 16


def test_convert_hostage_as_a_stolen_free_play():
    """Convert Hostage (TC-15): also playable as a Pigeon Thief's free action (TC-13)."""
    state = table(hands={0: ["Pigeon Thief"], 3: ["Convert Hostage"]}, hostages={0: ["Squirrel"]})
    act(state, 0, "Pigeon Thief: rob seat 3")
    act(state, 0, "Convert Hostage: convert a Squirrel")
    assert seat_names(state, "members", 0) == ["Squirrel"] and state.hostages[0] == []
    assert state.actions_left == 1


def test_protection_spell_only_for_seats_other_than_the_actor():
    """Protection Spell (TC-10): the actor is never asked about its own Snackrifice."""
    state = table(hands={0: ["Protection Spell"]}, hostages={0: ["Rat", "Rat"]}, chaos=["Trash Swap"])
    act(state, 0, "snackrifice 2 Rat Hostages")
    asked = []
    while state.pending["step"] == "protect":
        asked.append(state.to_act()[0])
        act(state, asked[-1], "let it happen")
    assert asked == [1, 2, 3]


def test_hide_skips_the_chaos_for_that_seat_only():
    """Hide (TC-9): played from hand to the trash instead of doing what the chaos says."""
    state = snackrifice_into_chaos(
        "Thunderstorm", shrine={0: ["Pizza"], 1: ["Pie"]}, hands={1: ["Hide", "Hide"]}
    )
    resolve(state, [0])
    assert sorted(legal_labels(state, 1)) == ["play Hide", "resolve the chaos card"]
    act(state, 1, "play Hide")
    resolve(state, [2, 3])
    assert state.shrine[0] == [] and seat_names(state, "shrine", 1) == ["Pie"]
    assert seat_names(state, "hands", 1) == ["Hide"] and "Hide" in names(state, state.trash)
    assert state.pending is None and len(state.chaos_discard) == 1


# --- chaos cards (TC-11) -------------------------------------------------------------------
def test_hungry_bear_two_animals_or_one_food():
    """Hungry Bear: a seat with both options picks; with 2 animals only, animals it is."""
    state = snackrifice_into_chaos(
        "Hungry Bear",
        members={1: ["Skunk"]},
        hostages={1: ["Rat"], 2: ["Rat", "Raccoon"]},
        stash={1: ["Pizza"]},
    )
    resolve(state, [0])
    act(state, 1, "lose food")
    assert state.stash[1] == [] and len(state.members[1]) == 1
    assert legal_labels(state, 2) == ["lose animals"]
    act(state, 2, "lose animals")  # both go, so there is nothing to choose
    assert state.hostages[2] == [] and state.to_act() == [3]


def test_rat_poison_one_animal_or_two_food():
    """Rat Poison: the seat chooses among the options it can pay in full."""
    state = snackrifice_into_chaos("Rat Poison", members={1: ["Skunk"]}, shrine={1: ["Pie", "Pie"]})
    resolve(state, [0])
    assert sorted(legal_labels(state, 1)) == ["lose animals", "lose food"]
    act(state, 1, "lose animals")
    assert state.members[1] == [] and len(state.shrine[1]) == 2


def test_animal_control_trashes_all_hostages():
    """Animal Control: every Hostage of each resolving seat goes; Cult Members stay."""
    state = snackrifice_into_chaos("Animal Control", hostages={1: ["Rat", "Raccoon"]}, members={1: ["Skunk"]})
    resolve(state, [0, 1, 2, 3])
    assert state.hostages[1] == [] and seat_names(state, "members", 1) == ["Skunk"]


def test_trashnado_trashes_the_stash_not_the_shrine():
    """Trashnado: all food in your Stash goes to the trash."""
    state = snackrifice_into_chaos("Trashnado", stash={2: ["Pie", "Donut"]}, shrine={2: ["Cookie"]})
    resolve(state, [0, 1, 2, 3])
    assert state.stash[2] == [] and seat_names(state, "shrine", 2) == ["Cookie"]


def test_garbage_trucks_broke_down_everyone_draws_two():
    """Garbage Trucks Broke Down: each resolving seat draws 2."""
    state = snackrifice_into_chaos("Garbage Trucks Broke Down", hands={3: ["Hide"]})
    before = [len(h) for h in state.hands]
    resolve(state, [0, 1, 2])
    act(state, 3, "play Hide")
    assert [len(h) for h in state.hands] == [before[0] + 2, before[1] + 2, before[2] + 2, 0]


def test_lunar_eclipse_converted_members_become_hostages():
    """Lunar Eclipse: converted members turn back into Hostages; Convert cards go to the
    trash; natural members stay."""
    state = snackrifice_into_chaos("Lunar Eclipse", members={1: ["Skunk", "Rat+", "Squirrel+"]})
    resolve(state, [0, 1])
    assert seat_names(state, "members", 1) == ["Skunk"] and state.tucked[1] == [-1]
    assert seat_names(state, "hostages", 1) == ["Rat", "Squirrel"]
    assert names(state, state.trash).count("Convert Hostage") == 2


def test_trash_swap_passes_hands_left_skipping_hiders():
    """Trash Swap: every hand passes to the left once all have answered; a seat that
    Hides keeps its hand and receives none (hands pass to the next seat that did not)."""
    state = snackrifice_into_chaos(
        "Trash Swap", hands={0: ["Pizza"], 1: ["Pie", "Hide"], 2: ["Cookie"], 3: ["Donut"]}
    )
    resolve(state, [0])
    act(state, 1, "play Hide")
    resolve(state, [2])
    assert seat_names(state, "hands", 0) == ["Pizza"]  # nothing moves until the last answer
    resolve(state, [3])
    hands = [seat_names(state, "hands", s) for s in range(4)]
    assert hands == [["Donut"], ["Pie"], ["Pizza"], ["Cookie"]]


def test_thunderstorm_trashes_one_shrine_food():
    """Thunderstorm: each resolving seat trashes 1 food from its Shrine."""
    state = snackrifice_into_chaos("Thunderstorm", shrine={0: ["Pizza", "Pizza"], 3: ["Donut"]})
    resolve(state, [0, 1, 2, 3])
    assert seat_names(state, "shrine", 0) == ["Pizza"] and state.shrine[3] == []


# --- the rulebook's FAQ -------------------------------------------------------------------
def test_faq_hungry_bear_with_one_food_and_one_animal_trashes_the_food():
    """FAQ / TC-11: Hungry Bear, 1 food and 1 animal: only the food option is payable."""
    state = snackrifice_into_chaos("Hungry Bear", members={1: ["Skunk"]}, shrine={1: ["Pie"]})
    resolve(state, [0])
    assert legal_labels(state, 1) == ["lose food"]
    act(state, 1, "lose food")
    assert state.shrine[1] == [] and seat_names(state, "members", 1) == ["Skunk"]


def test_faq_rat_poison_with_one_food_and_no_animals_trashes_that_food():
    """FAQ / TC-11: neither option payable in full, so the most you can afford: 1 food."""
    state = snackrifice_into_chaos("Rat Poison", shrine={1: ["Pie"]})
    resolve(state, [0])
    assert legal_labels(state, 1) == ["lose food"]
    act(state, 1, "lose food")
    assert state.shrine[1] == []


def test_faq_winning_food_lost_to_chaos_in_the_same_turn_does_not_win():
    """FAQ / TC-17: the Rat perk brings the 4th Pizza, then Thunderstorm trashes one:
    no win at the end of the turn."""
    state = snackrifice_into_chaos(
        "Thunderstorm",
        members={0: ["Raccoon"]},
        shrine={0: ["Pizza"] * 3},
        trash=["Pizza"],
        hands={0: ["Hide"]},
    )
    assert len(state.shrine[0]) == 4
    resolve(state, [0, 1, 2, 3])
    assert len(state.shrine[0]) == 3 and state.to_act() == [0]
    act(state, 0, "discard Hide")
    assert not state.is_terminal() and state.to_act() == [1]


def test_faq_reshuffle_in_the_middle_of_the_draw():
    """FAQ / TC-4: one card left, two to draw: take it, shuffle the trash into a new deck
    at once, draw on; a deck emptied by the last draw is refilled before the actions."""
    state = table(hands={0: ["Hide", "Hide"], 1: ["Pizza"] * 4}, deck=["Pie"], rest="trash")
    trash = len(state.trash)
    act(state, 0, "discard Hide")
    act(state, 0, "discard Hide")
    assert state.to_act() == [1] and len(state.hands[1]) == 6
    assert "Pie" in seat_names(state, "hands", 1)
    assert len(state.deck) == trash + 2 - 1 and state.trash == []


def test_faq_drawing_the_last_card_reshuffles_before_the_actions():
    """FAQ / TC-4: at 6 cards, draw the deck's last card; the trash becomes the deck
    right away, before the two actions."""
    state = table(hands={0: ["Hide", "Hide"], 1: ["Pizza"] * 6}, deck=["Pie"], rest="trash")
    act(state, 0, "discard Hide")
    act(state, 0, "discard Hide")
    assert state.to_act() == [1] and len(state.hands[1]) == 7 and not state.trash and state.deck


def test_faq_snackrificing_a_card_from_hand_is_not_possible():
    """FAQ / TC-7: a Rat in hand must first be played as a Cult Member (one action), then
    Snackrificed (the second)."""
    state = table(hands={3: ["Rat", "Rat", "Donut", "Donut"]}, active=3)
    assert not [label for label in legal_labels(state, 3) if label.startswith("snackrifice")]
    act(state, 3, "add Rat")
    assert "snackrifice a Rat Cult Member" in legal_labels(state, 3)
