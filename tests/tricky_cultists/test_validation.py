"""Tampered or impossible states are refused with BadState; bad configs with BadConfig."""

from __future__ import annotations

from typing import Any

import pytest

from services.engines.core.errors import BadConfig, BadState
from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.rules import STRIDE, TrickyCultistsState

from .setups import draft_position, round_position


def tampered(state: TrickyCultistsState, **changes: Any) -> dict[str, Any]:
    doc = state.to_json()
    doc.update(changes)
    return doc


def fresh() -> TrickyCultistsState:
    return GAME.new_state(None, 4, seed=2)  # type: ignore[return-value]


def mid() -> TrickyCultistsState:
    return round_position(
        hands=(["Red 5", "Blue 7"], ["Red 9", "Red 1"], ["Blue 1", "Blue 2"], ["Red 12", "Blue 9"]),
        tops=(2, 2, 2, 2),
    )


def doubled_card(s):
    return tampered(s, hands=[s.hands[0] + s.hands[1][:1], *s.hands[1:]])


def lost_card(s):
    return tampered(s, hands=[s.hands[0][1:], *s.hands[1:]])


def bonus_without_agenda(s):
    return tampered(s, phase="bonus", actor=1, pack=[], agenda_out=sorted(s.pack + s.agenda_out))


def codex_too_big(s):
    return tampered(s, codex=[s.codex[0] + s.hands[1], *s.codex[1:]], hands=[s.hands[0], [], *s.hands[2:]])


def half_a_trick(s):
    return tampered(s, won=[s.won[0] + s.hands[1], *s.won[1:]], hands=[s.hands[0], [], *s.hands[2:]])


NO_ROUND = [[0, 0, 0, 0]] * 4

# name: (position, tamper, what the refusal says)
TAMPERS = {
    "doubled card": (fresh, doubled_card, r"doubled \[\d+\]"),
    "lost card": (fresh, lost_card, r"missing \[\d+\]"),
    "card id as text": (fresh, lambda s: tampered(s, trick=["7"]), "list of card ids"),
    "unknown phase": (fresh, lambda s: tampered(s, phase="bidding"), "unknown phase"),
    "actor off the table": (fresh, lambda s: tampered(s, actor=4), "actor must be"),
    "actor as a bool": (fresh, lambda s: tampered(s, actor=True), "actor must be"),
    "three players": (fresh, lambda s: tampered(s, players=3), "player count"),
    "negative suspicion": (fresh, lambda s: tampered(s, suspicion=[0, -1, 0, 0]), "suspicion must be"),
    "five suspicion entries": (fresh, lambda s: tampered(s, suspicion=[0] * 5), "list of 4"),
    "agenda held twice": (
        fresh,
        lambda s: tampered(s, agendas=[s.pack[0], -1, -1, -1]),
        "agenda cards are not",
    ),
    "agenda before its turn": (
        fresh,
        lambda s: tampered(s, agendas=[-1, -1, s.pack[0], -1], pack=s.pack[1:]),
        "before its turn",
    ),
    "wrong start player": (fresh, lambda s: tampered(s, start=2), "Start Player"),
    "round past the last": (fresh, lambda s: tampered(s, round=4), "round must be"),
    "bonus pick without the agenda": (fresh, bonus_without_agenda, "Choose Bonus Suit holder"),
    "trump out of range": (mid, lambda s: tampered(s, trump=4), "trump must be"),
    "pack outside the draft": (
        mid,
        lambda s: tampered(s, pack=[s.agenda_out[0]], agenda_out=s.agenda_out[1:]),
        "only the draft",
    ),
    "wrong seat to play": (mid, lambda s: tampered(s, actor=2), "seat to play"),
    "half a trick won": (mid, half_a_trick, "whole tricks"),
    "codex too big": (mid, codex_too_big, "Codex holds more"),
    "steal without a stealer": (
        mid,
        lambda s: tampered(s, phase="steal", breakdown=[NO_ROUND], agenda_met=[[[-1, None]] * 4]),
        "Win No Tricks holder steals",
    ),
    "scored rounds missing": (mid, lambda s: tampered(s, round=1, start=1, breakdown=[]), "have been scored"),
    "breakdown part as text": (
        mid,
        lambda s: tampered(s, round=1, start=1, breakdown=[[["0", 0, 0, 0]] * 4]),
        "breakdown entry",
    ),
    "agenda judgement missing": (
        mid,
        lambda s: tampered(s, round=1, start=1, breakdown=[NO_ROUND], agenda_met=[]),
        "one list per scored round",
    ),
    "agenda met without points": (
        mid,
        lambda s: tampered(
            s, round=1, start=1, breakdown=[NO_ROUND], agenda_met=[[[2, True], *[[-1, None]] * 3]]
        ),
        "disagree with agenda_met",
    ),
    "agenda met as a number": (
        mid,
        lambda s: tampered(
            s, round=1, start=1, breakdown=[NO_ROUND], agenda_met=[[[2, 1], *[[-1, None]] * 3]]
        ),
        "true/false/null",
    ),
    "no agenda judged met": (
        mid,
        lambda s: tampered(
            s, round=1, start=1, breakdown=[NO_ROUND], agenda_met=[[[-1, False], *[[-1, None]] * 3]]
        ),
        "without an agenda",
    ),
    "capped while playing": (mid, lambda s: tampered(s, capped=True), "capped"),
    "turn past the cap": (mid, lambda s: tampered(s, turn=501), "max_turns"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_tampered_state_is_refused(name):
    """check_invariants guards from_json: each inconsistency is refused for its own reason."""
    make, tamper, reason = TAMPERS[name]
    with pytest.raises(BadState, match=reason):
        TrickyCultistsState.from_json(tamper(make()))


def test_untampered_positions_are_accepted():
    for state in (
        fresh(),
        mid(),
        draft_position(
            {0: None},
            ["Win No Tricks", "Win Last Trick", "Win Exactly Three", "Clean Hands", "Lead First Trick"],
        ),
    ):
        assert TrickyCultistsState.from_json(state.to_json()) == state


@pytest.mark.parametrize(
    "values",
    [
        {"suits": "Red,Black"},
        {"suits": "Red,Red"},
        {"ranks": 0},
        {"ranks": 30},
        {"hand_size": 11},
        {"hand_size": 0},
        {"value_divisor": 0},
        {"draft_size": 3},
        {"draft_size": 9},
        {"rounds": 0},
        {"rounds": 17},
        {"agenda_copies": 5},
        {"max_turns": 0},
        {"purple_suspicion": -1},
        {"no_such_field": 1},
    ],
)
def test_bad_config_is_refused(values):
    with pytest.raises(BadConfig):
        GAME.make_config(values)


def test_every_legal_action_has_its_own_label_and_unknown_ids_say_so():
    state = mid()
    labels = [state.action_label(a) for a in state.legal_actions(0)]
    assert labels == ["play Blue 7", "play Red 5"]
    assert state.action_label(99 * STRIDE) == f"unknown action {99 * STRIDE}"
