"""The JSON state form: tampered or corrupt states are refused; sizes, labels and hidden cards."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from services.engines.core.errors import BadState, IllegalAction
from services.engines.core.rng import Rng
from services.engines.core.serial import state_from_bytes, state_to_bytes
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.cards import FAVOR_1, FAVOR_4, HEX_O_RAMA, kind_table
from services.engines.crazy_cultists.rules import decode
from tests.support.positions import assert_config_set_later_plays_alike

from .tables import act, names, pass_window, table


def _doc() -> dict[str, Any]:
    state = table(
        config={"dark_powers": True},
        hands={0: ["fall_from_grace", "favor_1"], 1: ["favor_2"], 2: ["counter_spell"]},
        stacks={1: ["favor_3"]},
    )
    act(state, 0, "play Fall From Grace on seat 1")
    return state.to_json()  # a Counter-Spell window is open


def _tamper(change) -> dict[str, Any]:
    doc = copy.deepcopy(_doc())
    change(doc)
    return doc


def _cards(doc: dict[str, Any], zone: list[int], kind: int, count: int) -> list[int]:
    """Move `count` cards of `kind` out of `zone` and return them."""
    kinds, _ = kind_table(GAME.make_config(doc["config"]))
    picked = [c for c in zone if kinds[c] == kind][:count]
    zone[:] = [c for c in zone if c not in picked]
    return picked


def _dark_draw_not_owed(doc: dict[str, Any]) -> None:
    doc["discard"].append(doc["pending"]["card"])
    doc["pending"] = {"kind": "dark_draw", "player": 1, "target": -1, "card": -1, "count": 1,
                      "chain": [], "asked": [], "cards": []}  # fmt: skip


TAMPERINGS = {
    "doubled card": lambda d: d["hands"][3].append(d["deck"][0]),
    "lost card": lambda d: d["deck"].pop(),
    "bool card id": lambda d: d["discard"].append(True),
    "text card id": lambda d: d["hands"][1].append("favor_4"),
    "hands not a list": lambda d: d.update(hands={"0": []}),
    "too few hands": lambda d: d["hands"].pop(),
    "unknown decision": lambda d: d["pending"].update(kind="dance"),
    "missing pending key": lambda d: d["pending"].pop("asked"),
    "nobody asked": lambda d: d["pending"].update(asked=[]),
    "asked twice": lambda d: d["pending"].update(asked=[1, 1]),
    "asked a stranger": lambda d: d["pending"].update(asked=[7]),
    "target self": lambda d: d["pending"].update(target=0),
    "not the active player": lambda d: d["pending"].update(player=2),
    "favor in the chain": lambda d: d["pending"]["chain"].append(d["stacks"][1].pop()),
    "active off the table": lambda d: d.update(active=9),
    "winner without candles": lambda d: (
        d["discard"].append(d.pop("pending")["card"]) or d.update(winner=2, over=True, pending=None)
    ),
    "too many candles": lambda d: d.update(candles=[0, 6, 0, 0]),
    "baptized not bool": lambda d: d.update(baptized=[0, 0, 0, 0]),
    "owed dark draws negative": lambda d: d.update(dark_due=[0, -1, 0, 0]),
    "marker not polymorphization": lambda d: d["poly"].__setitem__(1, d["stacks"][1].pop()),
    "hijinx on a stack": lambda d: d["stacks"][2].extend(_cards(d, d["deck"], HEX_O_RAMA, 1)),
    "stack over threshold": lambda d: d["stacks"][2].extend(_cards(d, d["deck"], FAVOR_4, 3)),
    "dark card in main deck": lambda d: d["deck"].append(d["dark_deck"].pop()),
    "hand over the limit": lambda d: d["hands"][3].extend(_cards(d, d["deck"], FAVOR_1, 4)),
    "turn past the cap": lambda d: d.update(turn=501),
    "missing field": lambda d: d.pop("spire"),
    "dark draw not owed": _dark_draw_not_owed,
}


@pytest.mark.parametrize("name", sorted(TAMPERINGS))
def test_tampered_states_are_refused(name):
    doc = _tamper(TAMPERINGS[name])
    with pytest.raises(BadState):
        GAME.state_class.from_json(doc)


def test_the_untampered_document_restores():
    doc = _doc()
    assert GAME.state_class.from_json(doc).to_json() == doc


def test_an_illegal_action_is_refused_in_words():
    state = GAME.state_class.from_json(_doc())
    with pytest.raises(IllegalAction, match="not asked to decide"):
        state.apply(0, 600)
    with pytest.raises(IllegalAction, match="legal: 600=pass"):
        state.apply(1, 601)


def test_serialised_states_stay_under_4_kb():
    biggest = 0
    for seed in range(12):
        state = GAME.new_state({"dark_powers": True}, 6, seed)
        pick = random.Random(seed)
        while not state.is_terminal():
            biggest = max(biggest, len(state_to_bytes(state)))
            seat = state.to_act()[0]
            state.apply(seat, pick.choice(state.legal_actions(seat)))
    assert biggest <= 4096


def test_actions_decode_and_label_distinctly():
    state = table(
        config={"dark_powers": True},
        hands={0: ["hail_yourself"], 1: ["favor_1", "favor_2"], 2: ["favor_1"], 3: ["voodoo"]},
    )
    act(state, 0, "play Hail Yourself")
    pass_window(state)
    legal = state.legal_actions(0)
    assert [decode(a) for a in legal] == [("take", 0, 1), ("take", 1, 1), ("take", 0, 2), ("take", 25, 3)]
    assert len({state.action_label(a) for a in legal}) == len(legal)
    assert state.action_detail(legal[1]) == {"kind": "take", "card": "favor_2", "target": 1}
    assert decode(123456789)[0] == "pair" and decode(599) == ("unknown", -1, -1)


def test_resampling_keeps_what_the_player_was_shown():
    """G-3: the Evil Eye player saw the target's hand; re-dealing must not change it."""
    state = table(hands={0: ["evil_eye"], 1: ["favor_4", "hex_o_rama"], 2: ["favor_1"]})
    act(state, 0, "play Evil Eye on seat 1")
    pass_window(state)
    for salt in range(5):
        twin = state.clone()
        twin.resample_hidden(0, Rng(salt))
        assert names(twin, twin.hands[1]) == ["favor_4", "hex_o_rama"]


SHOWN = {
    "evil_eye": ({0: ["evil_eye"], 1: ["favor_4", "hex_o_rama"]}, "play Evil Eye on seat 1"),
    "ouija": ({0: ["ouija"], 2: ["favor_2", "life_siphon"]}, "play Ouija on seat 2"),
    "hail": ({0: ["hail_yourself", "favor_1"], 1: ["voodoo"], 3: ["favor_3"]}, "play Hail Yourself"),
    "scry": ({0: ["scrying_bones"], 1: ["favor_1"]}, "play Scrying Bones"),
    "nerd": ({0: ["nerdronomicon"], 1: ["black_spire"], 2: ["favor_2"]}, "play Nerdronomicon"),
}


@pytest.mark.parametrize("name", sorted(SHOWN))
def test_no_seat_sees_more_or_less_after_hidden_cards_are_redealt(name):
    """G-3: during every effect that shows cards, each seat's view survives a re-deal."""
    hands, play = SHOWN[name]
    state = table(config={"dark_powers": True}, hands=hands)
    act(state, 0, play)
    pass_window(state)
    assert state.pending is not None
    for observer in range(4):
        for salt in range(3):
            twin = state.clone()
            twin.resample_hidden(observer, Rng(salt))
            twin.check_invariants()
            assert twin.view(observer) == state.view(observer)
            assert twin.legal_actions(observer) == state.legal_actions(observer)


def test_bytes_round_trip_mid_decision():
    state = GAME.state_class.from_json(_doc())
    assert state_from_bytes(state_to_bytes(state)) == state


def test_a_config_set_on_a_state_is_the_one_its_rules_read() -> None:
    """The rules derive the hand limit and turn cap from the config once per state, so a
    position set up by hand and then given another config must be played by that config."""
    assert_config_set_later_plays_alike(GAME, GAME.make_config({"hand_limit": 4, "max_turns": 40}), 4, 3)
