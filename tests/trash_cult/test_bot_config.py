"""The heuristic reads every config number that changes what an action is worth (issue 13,
item 5): for each numeric field, a constructed position whose best action changes with it,
or a line in docs/bots.md saying why the field cannot change the heuristic's choice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.engines.core.game import State
from services.engines.trash_cult import GAME
from services.engines.trash_cult.bots import HeuristicBot
from services.engines.trash_cult.cards import COUNT_FIELDS
from services.engines.trash_cult.config import TrashCultConfig
from tests.bots.support import assert_numeric_fields_covered
from tests.support.positions import act
from tests.trash_cult.tables import table


def choice(state: State) -> str:
    seat = state.to_act()[0]
    legal = state.legal_actions(seat)
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, seat, legal))


def search(players: int) -> Callable[[dict[str, Any]], State]:
    """A Squirrel search (Opossum Plushie) by the Raccoon seat with one Cult Member and 3
    Pizza in its Shrine: more Pizza while the Shrine is short, else another Cult Member."""

    def build(config: dict[str, Any]) -> State:
        state = table(
            players=players,
            config=config,
            members={0: ["Raccoon"]},
            shrine={0: ["Pizza"] * 3},
            hands={0: ["Opossum Plushie"]},
        )
        act(state, 0, "Opossum Plushie: Squirrel perk, search the active deck for a card")
        for seat in range(1, players):
            act(state, seat, "let it happen")
        return state

    return build


def snack_or_rob(config: dict[str, Any]) -> State:
    """Snackrifice 3 Rat Hostages (Rat perk: Pizza is in the trash) or rob a hand of 15."""
    return table(
        players=2,
        config=config,
        hostages={0: ["Rat"] * 3},
        trash=["Pizza"],
        hands={0: ["Pigeon Thief"], 1: ["Pie"] * 10 + ["Donut"] * 5},
    )


def snack_food_or_rob(config: dict[str, Any]) -> State:
    """Snackrifice 3 Stash Cookies (Squirrel perk) or rob a hand of 1."""
    return table(players=2, config=config, stash={0: ["Cookie"] * 3}, hands={0: ["Pigeon Thief"], 1: ["Pie"]})


def either_or(card: str, **zones: Any) -> Callable[[dict[str, Any]], State]:
    """Seat 0 pays its Raccoon for a perk with no target; `card` is revealed, seat 0 has
    nothing to lose; seat 1 (the Skunk cult) chooses what to lose."""

    def build(config: dict[str, Any]) -> State:
        rest = {k: v for k, v in zones.items() if k != "members"}
        members = {0: ["Raccoon"], **zones.get("members", {})}
        state = table(players=2, config=config, members=members, chaos=[card], **rest)
        act(state, 0, "snackrifice a Raccoon Cult Member")
        act(state, 1, "let it happen")
        act(state, 0, "resolve the chaos card")
        assert state.to_act() == [1]
        return state

    return build


def thunderstorm(config: dict[str, Any]) -> State:
    """Thunderstorm on the actor with one Pizza in its Shrine and a Hide in hand."""
    state = table(
        players=2,
        config=config,
        members={0: ["Raccoon", "Raccoon"]},
        shrine={0: ["Pizza"]},
        hands={0: ["Hide"]},
        chaos=["Thunderstorm"],
    )
    act(state, 0, "snackrifice a Raccoon Cult Member")
    act(state, 1, "let it happen")
    return state


LAST_MEMBER = {"members": {1: ["Skunk"]}, "hostages": {1: ["Rat", "Rat"]}, "shrine": {1: ["Pie"]}}
CHEAP_FOOD = {"hostages": {1: ["Rat", "Rat"]}, "stash": {1: ["Cookie"]}, "shrine": {1: ["Pie"]}}
TWO_AND_TWO = {"hostages": {1: ["Rat", "Rat"]}, "stash": {1: ["Cookie", "Cookie"]}}
PIZZA, RACCOON = "take Pizza from the deck", "take Raccoon from the deck"

# field -> (position, its best action by default, the change, the best action after it)
CHANGES: dict[str, tuple[Callable[[dict[str, Any]], State], str, dict[str, Any], str]] = {
    "food_needed_2p": (search(2), PIZZA, {"food_needed_2p": 3}, RACCOON),
    "food_needed_3p": (search(3), PIZZA, {"food_needed_3p": 3}, RACCOON),
    "food_needed_4p": (search(4), PIZZA, {"food_needed_4p": 3}, RACCOON),
    "snackrifice_hostage_cost": (
        snack_or_rob,
        "snackrifice 2 Rat Hostages",
        {"snackrifice_hostage_cost": 3},
        "Pigeon Thief: rob seat 1",
    ),
    "snackrifice_food_cost": (
        snack_food_or_rob,
        "snackrifice 2 Cookie",
        {"snackrifice_food_cost": 3},
        "Pigeon Thief: rob seat 1",
    ),
    "hungry_bear_animals": (
        either_or("Hungry Bear", **LAST_MEMBER),
        "lose animals",
        {"hungry_bear_animals": 3},
        "lose food",
    ),
    "hungry_bear_food": (
        either_or("Hungry Bear", **CHEAP_FOOD),
        "lose food",
        {"hungry_bear_food": 2},
        "lose animals",
    ),
    "rat_poison_animals": (
        either_or("Rat Poison", **TWO_AND_TWO),
        "lose animals",
        {"rat_poison_animals": 2},
        "lose food",
    ),
    "rat_poison_food": (
        either_or("Rat Poison", **TWO_AND_TWO),
        "lose animals",
        {"rat_poison_food": 1},
        "lose food",
    ),
    "thunderstorm_food": (thunderstorm, "play Hide", {"thunderstorm_food": 0}, "resolve the chaos card"),
}
# field -> the words in docs/bots.md's Trash Cult paragraph that say why it cannot matter.
UNUSED = {
    **dict.fromkeys(COUNT_FIELDS, "card counts"),
    "garbage_trucks_draw": "`garbage_trucks_draw`",
    "actions_per_turn": "`actions_per_turn`",
    "hand_size": "`hand_size`",
    "deal": "`deal`",
    "max_turns": "`max_turns`",
}


def test_every_numeric_field_changes_a_choice_or_is_explained():
    assert_numeric_fields_covered(TrashCultConfig, set(CHANGES), UNUSED, "Trash Cult's heuristic reads")


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_changing_the_field_changes_the_heuristics_choice(field):
    position, default, change, changed = CHANGES[field]
    assert choice(position({})) == default
    assert choice(position(change)) == changed
