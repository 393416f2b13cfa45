"""States stored in the older documented form still load and play on (issue 16).

Issue 16 added fields to the JSON form of every game (Tricky Cultists' `suit_limits` and
`agenda_met`, the other games' `known` / `known_deck`). States written before then (in
Redis, in replays, in support cases) lack them; `State.upgrade` fills each with a default
that forgets what the field records and claims nothing. These tests take a real position,
strip the newer fields as an older engine would have written it, and check that it loads,
keeps everything it had, plays to the end, and that a broken older document is still
refused.
"""

from __future__ import annotations

import copy
import random

import pytest

from services.engines.core.errors import BadState
from services.engines.core.serial import state_from_json
from services.engines.registry import load_game
from services.engines.tricky_cultists.rules import UNRECORDED

NEWER = {
    "tricky_cultists": ("suit_limits", "agenda_met"),
    "crazy_cultists": ("known", "known_deck"),
    "trash_cult": ("known", "known_deck"),
}


def _played(game: str, players: int, seed: int, until: object) -> object:
    """A random game (seeded) stopped at the first position where `until(state)` holds."""
    spec = load_game(game)
    state = spec.new_state(None, players, seed)
    pick = random.Random(seed)
    while not until(state):
        seat = state.to_act()[0]
        state.apply(seat, pick.choice(state.legal_actions(seat)))
    return state


def _older(doc: dict) -> dict:
    old = copy.deepcopy(doc)
    for name in NEWER[doc["game"]]:
        del old[name]
    return old


def _play_out(state: object, seed: int) -> None:
    pick = random.Random(seed)
    while not state.is_terminal():
        seat = state.to_act()[0]
        state.apply(seat, pick.choice(state.legal_actions(seat)))


def test_an_older_tricky_cultists_state_loads_and_plays_on() -> None:
    """Two rounds scored, a void revealed in the third: the older form (no `suit_limits`,
    no `agenda_met`) loads with no void on record and both past rounds "not recorded",
    keeps every other field, and plays on; the rounds scored after the load are judged."""
    state = _played(
        "tricky_cultists", 4, 5, lambda s: s.round == 2 and s.phase == "play" and any(s.suit_limits)
    )
    doc = state.to_json()
    old = _older(doc)
    before = copy.deepcopy(old)
    loaded = state_from_json(old, "tricky_cultists")
    assert old == before  # the caller's document is not changed
    assert loaded.suit_limits == [[], [], [], []]
    assert loaded.agenda_met == [[[UNRECORDED, None]] * 4] * 2
    assert {k: v for k, v in loaded.to_json().items() if k not in NEWER["tricky_cultists"]} == old
    # the view names no agenda for the unrecorded rounds, so sweeps count none of them
    scores = loaded.view(None)["scores"]
    assert len(scores) == 2 and all(seat["agenda_kept"] == "" for r in scores for seat in r["seats"])
    _play_out(loaded, 5)
    assert loaded.is_terminal() and len(loaded.agenda_met) == len(loaded.breakdown)
    assert all(item[0] != UNRECORDED for judged in loaded.agenda_met[2:] for item in judged)
    assert state_from_json(loaded.to_json()).to_json() == loaded.to_json()  # current form now


@pytest.mark.parametrize("game", ["crazy_cultists", "trash_cult"])
def test_older_crazy_cultists_and_trash_cult_states_load_with_nothing_remembered(game: str) -> None:
    state = _played(game, 3, 11, lambda s: s.decisions >= 40 or s.is_terminal())
    loaded = state_from_json(_older(state.to_json()), game)
    assert loaded.known == [[], [], []] and loaded.known_deck == [[], [], []]
    assert loaded.view(0) == state.view(0) and loaded.view(None) == state.view(None)
    _play_out(loaded, 11)
    assert loaded.is_terminal()


def test_an_older_state_is_still_checked_in_full() -> None:
    """The defaults fill only what the older form lacked: a lost card, an unknown judgement
    kind or a wrong round count is refused as before."""
    state = _played("tricky_cultists", 4, 7, lambda s: s.round == 1 and s.phase == "play")
    old = _older(state.to_json())
    lost = copy.deepcopy(old)
    lost["hands"][0] = lost["hands"][0][1:]
    with pytest.raises(BadState):
        state_from_json(lost)
    too_many = copy.deepcopy(old)
    too_many["breakdown"].append([[0, 0, 0, 0]] * 4)
    with pytest.raises(BadState, match="rounds"):
        state_from_json(too_many)
    # "not recorded" is only for a round without a judgement: a current document may use
    # it, but not with a met/failed verdict
    current = state.to_json()
    current["agenda_met"][0][0] = [UNRECORDED, True]
    with pytest.raises(BadState, match="judged null"):
        state_from_json(current)
