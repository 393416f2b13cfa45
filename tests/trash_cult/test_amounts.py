"""Every number of TC-7 and TC-11 is a config default (rulings: "every number below is a
default of the game's config"): for each, a position where changing it changes play.

Each chaos scenario is a 2-player table where seat 0 snackrifices a Raccoon Cult Member
(a perk with no target) and reveals the named chaos card; seat 0 answers first, then seat 1.
"""

from __future__ import annotations

from typing import Any

import pytest

from services.engines.core.errors import BadConfig
from services.engines.core.game import State
from services.engines.trash_cult import GAME
from tests.support.positions import act, legal_labels
from tests.trash_cult.tables import names, seat_names, table


def chaos(card: str, config: dict[str, Any] | None = None, **zones: Any) -> State:
    """The position just after `card` is revealed: seat 0 is asked first."""
    members = {0: ["Raccoon"], **zones.pop("members", {})}
    state = table(players=2, members=members, chaos=[card], config=config, **zones)
    act(state, 0, "snackrifice a Raccoon Cult Member")
    act(state, 1, "let it happen")
    assert state.pending["step"] == "chaos" and state.to_act() == [0]
    return state


def test_snackrifice_hostage_cost_is_a_config_field():
    hostages = {0: ["Rat", "Rat", "Rat"]}
    default = table(players=2, hostages=hostages)
    assert "snackrifice 2 Rat Hostages" in legal_labels(default, 0)
    three = table(players=2, hostages=hostages, config={"snackrifice_hostage_cost": 3})
    assert "snackrifice 3 Rat Hostages" in legal_labels(three, 0)
    act(three, 0, "snackrifice 3 Rat Hostages")
    assert names(three, three.trash) == ["Rat", "Rat", "Rat"] and three.hostages[0] == []
    four = table(players=2, hostages=hostages, config={"snackrifice_hostage_cost": 4})
    assert not any("Hostages" in label for label in legal_labels(four, 0))


def test_snackrifice_food_cost_is_a_config_field():
    stash = {0: ["Cookie"]}
    assert not any("Cookie" in label for label in legal_labels(table(players=2, stash=stash), 0))
    one = table(players=2, stash=stash, config={"snackrifice_food_cost": 1})
    act(one, 0, "snackrifice 1 Cookie")
    assert names(one, one.trash) == ["Cookie"] and one.stash[0] == []


@pytest.mark.parametrize(
    ("card", "config", "options"),
    [
        # The rulebook FAQ's seat: 1 animal, 1 food.
        ("Hungry Bear", {}, ["lose food"]),  # 2 animals / 1 food: only food is payable in full
        ("Hungry Bear", {"hungry_bear_animals": 1}, ["lose animals", "lose food"]),
        ("Hungry Bear", {"hungry_bear_food": 2}, ["lose animals", "lose food"]),  # neither in full
        ("Rat Poison", {}, ["lose animals"]),  # 1 animal / 2 food
        ("Rat Poison", {"rat_poison_food": 1}, ["lose animals", "lose food"]),
        ("Rat Poison", {"rat_poison_animals": 2}, ["lose animals", "lose food"]),
    ],
)
def test_either_or_amounts_are_config_fields(card, config, options):
    state = chaos(card, config, members={1: ["Skunk"]}, stash={1: ["Cookie"]})
    act(state, 0, "resolve the chaos card")  # seat 0 has nothing left to lose
    assert sorted(legal_labels(state, 1)) == options


def test_either_or_loses_the_configured_number_of_cards():
    zones = {"members": {1: ["Skunk"]}, "hostages": {1: ["Rat", "Rat", "Raccoon"]}}
    default = chaos("Hungry Bear", **zones)
    act(default, 0, "resolve the chaos card")
    act(default, 1, "lose animals")
    act(default, 1, "trash a Rat Hostage")
    act(default, 1, "trash a Rat Hostage")
    assert len(default.hostages[1]) + len(default.members[1]) == 2  # 4 animals, 2 lost
    three = chaos("Hungry Bear", {"hungry_bear_animals": 3}, **zones)
    act(three, 0, "resolve the chaos card")
    act(three, 1, "lose animals")
    for _ in range(3):
        act(
            three,
            1,
            "trash a Rat Hostage"
            if "trash a Rat Hostage" in legal_labels(three, 1)
            else "trash a Raccoon Hostage",
        )
    assert seat_names(three, "members", 1) == ["Skunk"] and three.hostages[1] == []


@pytest.mark.parametrize(("draw", "grows"), [(None, 2), (3, 3), (0, 0)])
def test_garbage_trucks_draw_is_a_config_field(draw, grows):
    config = {} if draw is None else {"garbage_trucks_draw": draw}
    state = chaos("Garbage Trucks Broke Down", config)
    before = len(state.hands[0])
    act(state, 0, "resolve the chaos card")
    assert len(state.hands[0]) == before + grows


@pytest.mark.parametrize(("food", "left"), [(None, 2), (2, 1), (5, 0)])
def test_thunderstorm_food_is_a_config_field(food, left):
    config = {} if food is None else {"thunderstorm_food": food}
    state = chaos("Thunderstorm", config, shrine={0: ["Pizza", "Pizza", "Pizza"]})
    act(state, 0, "resolve the chaos card")
    assert len(state.shrine[0]) == left and names(state, state.trash).count("Pizza") == 3 - left


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"snackrifice_hostage_cost": 0}, "snackrifice_hostage_cost must be within 1.."),
        ({"snackrifice_food_cost": 0}, "snackrifice_food_cost must be within 1.."),
        ({"hungry_bear_animals": -1}, "hungry_bear_animals must be within 0.."),
        ({"garbage_trucks_draw": 99}, "garbage_trucks_draw must be within 0.."),
    ],
)
def test_bad_amounts_are_refused_in_words(values, words):
    with pytest.raises(BadConfig, match=words):
        GAME.make_config(values)
