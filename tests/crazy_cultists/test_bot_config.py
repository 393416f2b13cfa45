"""The heuristic reads every config number that changes what a play is worth (issue 13,
item 5): for each numeric field, a constructed position whose best play changes with it,
or a line in docs/bots.md saying why the field cannot change the heuristic's choice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.engines.core.game import State
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.bots import HeuristicBot
from services.engines.crazy_cultists.cards import NAMES
from services.engines.crazy_cultists.config import CrazyCultistsConfig
from tests.bots.support import assert_numeric_fields_covered

from .tables import table


def choice(state: State, seat: int = 0) -> str:
    legal = state.legal_actions(seat)
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, seat, legal))


def candle_or_hex(config: dict[str, Any]) -> State:
    """Seat 0 can light a candle with Favor 3 (stack 7, threshold 10) or hex seat 1 (9)."""
    return table(
        config=config,
        hands={0: ["favor_3", "hex_o_rama"]},
        stacks={0: ["favor_4", "favor_3"], 1: ["favor_4", "favor_4", "favor_1"]},
    )


def who_to_skip(config: dict[str, Any]) -> State:
    """Polymorphization: seat 1 holds 2 candles, seat 2 a stack of 9 toward its first."""
    return table(
        config=config,
        hands={0: ["polymorphization"]},
        stacks={2: ["favor_4", "favor_4", "favor_1"]},
        candles=[0, 2, 0, 0],
    )


def beast_candle_or_hex(config: dict[str, Any]) -> State:
    """Beast mode: Favor 2 lights at 6 (stack 4); seat 1, 2 candles of 3, holds a stack of 5."""
    return table(
        config={"variant": "beast", **config},
        hands={0: ["favor_2", "hex_o_rama"]},
        stacks={0: ["favor_4"], 1: ["favor_4", "favor_1"]},
        candles=[0, 2, 0, 0],
    )


def beast_who_to_skip(config: dict[str, Any]) -> State:
    return table(
        config={"variant": "beast", **config},
        hands={0: ["polymorphization"]},
        stacks={2: ["favor_4", "favor_1"]},
        candles=[0, 1, 0, 0],
    )


def topple_the_spire(config: dict[str, Any]) -> State:
    """Seat 0's own Black Spire stands, empty: which favor card brings it down best?"""
    return table(config={"dark_powers": True, **config}, hands={0: ["favor_1", "favor_3"]}, spire={0: []})


# field -> (position, its best play by default, the change, the best play after it)
CHANGES: dict[str, tuple[Callable[[dict[str, Any]], State], str, dict[str, Any], str]] = {
    "threshold": (candle_or_hex, "play Favor 3", {"threshold": 12}, "play Hex-O-Rama on seat 1"),
    "candles_to_win": (
        who_to_skip,
        "play Polymorphization on seat 2",
        {"candles_to_win": 3},
        "play Polymorphization on seat 1",
    ),
    "beast_threshold": (
        beast_candle_or_hex,
        "play Favor 2",
        {"beast_threshold": 8},
        "play Hex-O-Rama on seat 1",
    ),
    "beast_candles_to_win": (
        beast_who_to_skip,
        "play Polymorphization on seat 2",
        {"beast_candles_to_win": 2},
        "play Polymorphization on seat 1",
    ),
    "black_spire_points": (topple_the_spire, "play Favor 3", {"black_spire_points": 1}, "play Favor 1"),
}
# field -> the words in docs/bots.md's Crazy Cultists paragraph that say why it cannot matter.
COUNTS = {name: "card counts" for name in NAMES}
UNUSED = {
    **COUNTS,
    "remove_fall_from_grace": "`remove_*`",
    "remove_infernal_inferno": "`remove_*`",
    "remove_hex_o_rama": "`remove_*`",
    "remove_evil_eye": "`remove_*`",
    "remove_counter_spell": "`remove_*`",
    "hand_limit": "`hand_limit`",
    "starting_hand": "`starting_hand`",
    "max_turns": "`max_turns`",
}


def test_every_numeric_field_changes_a_choice_or_is_explained():
    assert_numeric_fields_covered(
        CrazyCultistsConfig, set(CHANGES), UNUSED, "Crazy Cultists' heuristic reads"
    )


@pytest.mark.parametrize("field", sorted(CHANGES))
def test_changing_the_field_changes_the_heuristics_choice(field):
    position, default, change, changed = CHANGES[field]
    assert choice(position({})) == default
    assert choice(position(change)) == changed


def test_evil_eye_takes_a_card_rather_than_nothing():
    state = table(hands={0: ["evil_eye"], 1: ["favor_1"]})
    for label in ("play Evil Eye on seat 1", "pass", "pass", "pass"):
        seat = state.to_act()[0]
        state.apply(seat, next(a for a in state.legal_actions(seat) if state.action_label(a) == label))
    assert choice(state) == "take Favor 1 from their hand"
