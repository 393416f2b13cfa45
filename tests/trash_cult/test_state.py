"""The state as data: validation of restored states, hidden information (G-3), action
encoding and labels, the protobuf contract and the 4 KB budget."""

from __future__ import annotations

import random

import pytest

from services.engines.core.config import config_to_dict
from services.engines.core.errors import BadState
from services.engines.core.rng import Rng
from services.engines.core.serial import state_from_bytes, state_to_bytes
from services.engines.trash_cult import GAME
from services.engines.trash_cult.cards import KIND_BY_NAME
from services.engines.trash_cult.proto import MESSAGES
from services.engines.trash_cult.rules import DECODE, FAMILIES, N_ACTIONS, family
from tests.support.positions import act, assert_config_set_later_plays_alike
from tests.trash_cult.tables import table


def midgame(seed: int = 4, steps: int = 300):
    state = GAME.new_state(None, 4, seed)
    pick = random.Random(seed)
    for _ in range(steps):
        seat = state.to_act()[0]
        state.apply(seat, pick.choice(state.legal_actions(seat)))
    return state


def restore(doc):
    return GAME.state_class.from_json(doc)


# --- tampered or corrupt states are BadState ---------------------------------------------
TAMPERS = {
    "doubled card": lambda d: d["hands"][0].append(d["deck"][0]),
    "lost card": lambda d: d["deck"].pop(),
    "chaos card in the deck": lambda d: d["deck"].append(d["chaos_deck"].pop()),
    "active card in chaos deck": lambda d: d["chaos_deck"].append(d["deck"].pop()),
    "string card": lambda d: d["deck"].append("7"),
    "bool card": lambda d: d["trash"].append(True),
    "wrong seat count": lambda d: d["hands"].pop(),
    "same cult twice": lambda d: d.update(cult=[0, 0, 2, 3]),
    "cult out of range": lambda d: d.update(cult=[0, 1, 2, 9]),
    "active out of range": lambda d: d.update(active=4),
    "too many actions": lambda d: d.update(actions_left=3),
    "winner while playing": lambda d: d.update(winner=1),
    "over not a bool": lambda d: d.update(over=0),
    "nobody to act": lambda d: d.update(actions_left=0),
    "unknown step": lambda d: d.update(pending={"step": "dance", "seat": 0}),
    "pending seat out of range": lambda d: d.update(
        pending={"step": "protect", "seat": 7, "event": "poison", "perk": -1, "target": 1}
    ),
    "actor asked to protect": lambda d: d.update(
        pending={"step": "protect", "seat": 0, "event": "snackrifice", "perk": 1, "target": -1}
    ),
    "pending with a stray key": lambda d: d.update(
        pending={"step": "protect", "seat": 1, "event": "poison", "perk": -1, "target": 2, "x": 1}
    ),
    "chaos pending holding an active card": lambda d: d.update(
        pending={"step": "chaos", "seat": 0, "card": d["deck"].pop(), "hiders": [], "want": "", "left": 0}
    ),
    "Shrine with another cult's food": lambda d: d["shrine"][0].append(_take(d, "Pie")),
    "Hostage of one's own animal": lambda d: d["hostages"][0].append(_take(d, "Raccoon")),
    "converted member without its Convert card": lambda d: (
        d["members"][0].append(_take(d, "Skunk")),
        d["tucked"][0].append(-1),
    ),
    "tucked not parallel to members": lambda d: d["tucked"][0].append(-1),
}


def _take(doc, name):
    kinds = GAME.make_config(doc["config"]).kinds
    card = next(c for c in doc["deck"] if kinds[c] == KIND_BY_NAME[name])
    doc["deck"].remove(card)
    return card


@pytest.mark.parametrize("tamper", list(TAMPERS), ids=list(TAMPERS))
def test_tampered_states_are_refused(tamper):
    doc = table(cults=["Raccoon", "Skunk", "Squirrel", "Rat"]).to_json()
    restore(doc)  # the untouched position is fine
    TAMPERS[tamper](doc)
    with pytest.raises(BadState):
        restore(doc)


def test_missing_field_and_pick_phase_tampering_are_refused():
    doc = GAME.new_state(None, 4, 1).to_json()
    for bad in ({"pending": None}, {"cult": [-1, -1, -1, 2]}, {"pending": {"step": "cult", "seat": 0}}):
        with pytest.raises(BadState):
            restore({**doc, **bad})
    del doc["shrine"]
    with pytest.raises(BadState):
        restore(doc)


# --- hidden information (G-3) -------------------------------------------------------------
def test_view_shows_own_hand_and_only_sizes_of_hidden_zones():
    state = midgame()
    for seat in range(4):
        view = state.view(seat)
        assert len(view["hand"]) == len(state.hands[seat])
        assert [s["hand_size"] for s in view["seats"]] == [len(h) for h in state.hands]
        assert view["deck_size"] == len(state.deck) and "deck" not in view
    assert state.view(None)["hand"] == [] and state.view(None)["seat"] is None


def test_resample_keeps_every_view_and_conserves_cards():
    state = midgame()
    for seat in range(4):
        twin = state.clone()
        twin.resample_hidden(seat, Rng(seat))
        twin.check_invariants()
        assert twin.view(seat) == state.view(seat) and twin.view(None) == state.view(None)
        assert twin.hands[seat] == state.hands[seat]


def test_the_stolen_card_is_hidden_from_all_but_the_thief():
    """G-3 / TC-13: while the thief decides, others see only that a card was stolen."""
    state = table(hands={0: ["Pigeon Thief"], 2: ["Pizza"]})
    act(state, 0, "Pigeon Thief: rob seat 2")
    assert state.view(0)["pending"]["stolen"] == "Pizza"
    assert state.view(1)["pending"]["stolen"] == "" and state.view(1)["pending"]["victim"] == 2
    twin = state.clone()
    twin.resample_hidden(1, Rng(3))
    twin.check_invariants()
    assert twin.view(1) == state.view(1)


def test_search_shows_the_deck_to_the_searcher_only():
    """G-3 / TC-8: the Squirrel searcher's view lists the deck; resampling for the searcher
    keeps what is in the deck, resampling for others does not need to."""
    state = table(players=2, hands={0: ["Opossum Plushie"]})
    act(state, 0, "Opossum Plushie: Squirrel perk, search the active deck for a card")
    act(state, 1, "let it happen")
    assert state.pending["step"] == "perk"
    twin = state.clone()
    twin.resample_hidden(0, Rng(9))
    assert twin.view(0) == state.view(0) and sorted(twin.deck) == sorted(state.deck)
    assert state.view(1)["pending"]["search"] == []


def test_protection_and_hide_questions_go_to_every_seat():
    """G-3 / G-4: who is asked never depends on a hand; seats without the card get one
    choice, seats with it two."""
    state = table(hands={2: ["Protection Spell"]}, hostages={0: ["Rat", "Rat"]}, chaos=["Trash Swap"])
    act(state, 0, "snackrifice 2 Rat Hostages")
    asked = []
    while state.pending["step"] == "protect":
        seat = state.to_act()[0]
        asked.append((seat, len(state.legal_actions(seat))))
        act(state, seat, "let it happen")
    assert asked == [(1, 1), (2, 2), (3, 1)]


# --- actions ------------------------------------------------------------------------------
def test_action_ids_decode_to_distinct_labels_and_details():
    state = GAME.new_state(None, 4, 0)
    labels = [state.action_label(a) for a in range(N_ACTIONS)]
    assert len(DECODE) == N_ACTIONS == sum(size for _n, _k, size in FAMILIES)
    for fam in {name for name, _k, _s in FAMILIES}:
        of_family = [label for a, label in enumerate(labels) if family(a) == fam]
        assert len(set(of_family)) == len(of_family)
    for a in range(N_ACTIONS):
        MESSAGES.action_to_any(state.action_detail(a))
    assert state.action_detail(0) == {"kind": "add", "card": "Raccoon"}
    assert "unknown" in state.action_label(N_ACTIONS)


# --- protobuf and size --------------------------------------------------------------------
def test_config_round_trips_through_protobuf():
    for values in ({}, {"cults": ["Rat", "Skunk"], "max_turns": 50, "hides": 0, "food_needed_2p": 3}):
        cfg = GAME.make_config(values)
        back = GAME.make_config(MESSAGES.config_from_any(MESSAGES.config_to_any(config_to_dict(cfg))))
        assert back == cfg


def test_views_convert_for_every_seat_and_spectator():
    state = midgame()
    for seat in [None, 0, 1, 2, 3]:
        MESSAGES.view_to_any(state.view(seat))


def test_serialised_state_stays_under_4kb():
    state = midgame(steps=600)
    data = state_to_bytes(state)
    assert len(data) <= 4096
    assert state_from_bytes(data) == state


def test_public_events_never_name_a_hidden_card():
    """G-3: the log says a card was stolen or found, never which, until it is played."""
    state = table(hands={0: ["Pigeon Thief", "Opossum Plushie"], 1: ["Protection Spell"]})
    act(state, 0, "Pigeon Thief: rob seat 1")
    act(state, 0, "keep the stolen card")
    act(state, 0, "Opossum Plushie: Squirrel perk, search the active deck for a card")
    for seat in (1, 2, 3):
        act(state, seat, "let it happen")
    act(state, 0, "take Hide from the deck")
    text = " ".join(event.text for event in state.log)
    assert "steals a card" in text and "takes a card" in text
    assert "Protection Spell" not in text and "Hide" not in text


def test_a_config_set_on_a_state_is_the_one_its_rules_read() -> None:
    """The rules read the config's values once per state (`_derive`), so a position set up
    by hand and then given another config must be played by that config, not the first."""
    costly = GAME.make_config({"snackrifice_food_cost": 1, "snackrifice_hostage_cost": 1})
    assert_config_set_later_plays_alike(GAME, costly, 4, 9)
