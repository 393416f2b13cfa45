"""The heuristic reads every scoring and cost number of the config (issue 13, item 5).

For each numeric VP, cost, penalty or target field, one constructed position where the
default value and another value make the heuristic choose differently: a sweep over that
field then measures the rule, not a bot that ignores it. Fields that cannot matter to it
are listed in docs/bots.md with the reason, and this test checks that list is complete.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.bots import HeuristicBot
from services.engines.tricky_cultists.cards import AGENDAS
from services.engines.tricky_cultists.config import TrickyCultistsConfig
from services.engines.tricky_cultists.rules import TrickyCultistsState
from tests.support.positions import act, position

from .setups import LAST_HANDS, card, cards, play, round_position

ROOT = Path(__file__).resolve().parents[2]

# Hands for the draft, by how many tricks the bot expects them to take (bots._win_chance).
WEAK = ["Blue 1", "Blue 2", "Blue 3", "Blue 4", "Blue 5", "Red 1", "Red 2", "Red 3", "Red 4", "Red 5"]
NEARLY_WEAK = [*WEAK[:9], "Green 11"]  # about 0.9 tricks
MIDDLING = [*WEAK[:7], "Blue 13", "Red 13", "Green 13"]  # about 3.05 tricks


def drafting(hand: list[str], pack: list[str], config: dict[str, Any]) -> TrickyCultistsState:
    """Seats 0-2 have kept agendas not in `pack`; seat 3 holds `hand` and picks from `pack`."""
    spare = [a for a in AGENDAS if a not in pack]
    agendas = [AGENDAS.index(a) for a in spare[:3]] + [-1]
    pack_ids = [AGENDAS.index(a) for a in pack]
    mine = sorted(cards(hand))
    rest = [c for c in range(52) if c not in mine]
    hands = [sorted(rest[i * 10 : (i + 1) * 10]) for i in range(3)] + [mine]
    codex = [sorted(rest[30 + i * 3 : 33 + i * 3]) for i in range(4)]
    return position(  # type: ignore[return-value]
        GAME,
        players=4,
        config=config,
        actor=3,
        hands=hands,
        codex=codex,
        agendas=agendas,
        pack=pack_ids,
        agenda_out=[a for a in range(len(AGENDAS)) if a not in agendas and a not in pack_ids],
    )


def draft_choice(config: dict[str, Any], hand: list[str], pack: list[str]) -> str:
    state = drafting(hand, pack, config)
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, 3, state.legal_actions(3)))


def purple_choice(config: dict[str, Any]) -> str:
    """Seat 0 triggers Purple with Suspicion [0, 1, 0, 1]: one more on an opponent makes
    it the strict most (it discards); two on itself do the same for its own pile."""
    state = round_position(
        hands=(["Purple 3", "Blue 7"], ["Blue 9", "Red 1"], ["Blue 1", "Blue 2"], ["Red 12", "Blue 3"]),
        tops=(2, 2, 2, 2),
        suspicion=[0, 1, 0, 1],
        config=config,
    )
    play(state, "Purple 3", "Blue 9", "Blue 1", "Blue 3")
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, 0, state.legal_actions(0)))


def steal_choice(config: dict[str, Any]) -> str:
    """Seat 1 met Win No Tricks and may steal Red 1's trick or Green 5's (Green is bonus)."""
    state = round_position(
        tops=(["Red 1", "Green 5"], 0, 3, 4),
        bonus="Green",
        agendas=(None, "Win No Tricks", None, None),
        config=config,
    )
    play(state, *(h[0] for h in LAST_HANDS))
    assert (state.phase, state.actor) == ("steal", 1)
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, 1, state.legal_actions(1)))


def lone_steal_choice(config: dict[str, Any]) -> str:
    """The only trick to steal is topped by Blue 13 (the last trick): steal or pass."""
    state = round_position(tops=(0, 0, 0, 9), agendas=(None, "Win No Tricks", None, None), config=config)
    play(state, *(h[0] for h in LAST_HANDS))
    assert [state.action_label(a) for a in state.legal_actions(1)][-1] == "pass"
    return state.action_label(HeuristicBot(GAME, seed=0).choose(state, 1, state.legal_actions(1)))


def draft(hand: list[str], *pack: str):
    return lambda config: draft_choice(config, hand, list(pack))


# field -> (position, another value of the field); the choice differs from the default's.
CASES = {
    "decline_suspicion": (draft(MIDDLING, "Win Last Trick", "Trigger Most Abilities"), 0),
    "suspicion_penalty": (draft(MIDDLING, "Win Last Trick", "Trigger Most Abilities"), 0),
    "lead_first_success": (draft(MIDDLING, "Lead First Trick", "Win Last Trick"), 0),
    "lead_first_suspicion": (draft(MIDDLING, "Lead First Trick", "Win Last Trick"), 2),
    "bonus_suit_success": (draft(MIDDLING, "Choose Bonus Suit", "Win Exactly Three"), 3),
    "bonus_suit_failure": (draft(MIDDLING, "Choose Bonus Suit", "Win Last Trick"), -20),
    "bonus_per_trick": (draft(MIDDLING, "Choose Bonus Suit", "Win Exactly Three"), 3),
    "most_tricks_success": (draft(MIDDLING, "Win Most Tricks", "Win Last Trick"), 0),
    "most_tricks_failure": (draft(MIDDLING, "Win Most Tricks", "Win Last Trick"), -6),
    "no_tricks_success": (draft(WEAK, "Win No Tricks", "Win Last Trick"), -5),
    "no_tricks_failure": (draft(NEARLY_WEAK, "Win No Tricks", "Win Last Trick"), -6),
    "last_trick_success": (draft(MIDDLING, "Win Last Trick", "Trigger Most Abilities"), 0),
    "last_trick_failure": (draft(MIDDLING, "Win Last Trick", "Trigger Most Abilities"), -3),
    "exactly_three_success": (draft(MIDDLING, "Win Exactly Three", "Choose Bonus Suit"), 1),
    "exactly_three_failure": (draft(MIDDLING, "Win Exactly Three", "Choose Bonus Suit"), -5),
    "exactly_three_target": (draft(MIDDLING, "Win Exactly Three", "Choose Bonus Suit"), 6),
    "most_abilities_success": (draft(MIDDLING, "Trigger Most Abilities", "Win Last Trick"), 5),
    "most_abilities_failure": (draft(MIDDLING, "Trigger Most Abilities", "Win Last Trick"), 0),
    "clean_hands_success": (draft(MIDDLING, "Clean Hands", "Win Last Trick"), 4),
    "clean_hands_failure": (draft(MIDDLING, "Clean Hands", "Win Last Trick"), 0),
    "purple_suspicion": (purple_choice, 2),
    "value_divisor": (steal_choice, 20),
    "value_base": (lone_steal_choice, 1),
}


@pytest.mark.parametrize("field", sorted(CASES))
def test_changing_a_scoring_or_cost_field_changes_the_heuristics_choice(field: str) -> None:
    choose, other = CASES[field]
    default = getattr(TrickyCultistsConfig(), field)
    assert other != default
    assert choose({}) != choose({field: other}), f"{field}={other} left the choice at {choose({})!r}"


def test_decline_suspicion_makes_declining_the_pick_when_it_costs_nothing() -> None:
    """The issue's case: Win No Tricks was played alike at decline_suspicion 0, 1 and 2."""
    hand, pack = MIDDLING, ["Win Last Trick", "Trigger Most Abilities"]
    assert draft_choice({}, hand, pack) == "keep Win Last Trick"
    assert draft_choice({"decline_suspicion": 0}, hand, pack) == "decline an agenda (take a Suspicion)"
    worst = ["Win Most Tricks", "Win Exactly Three"]  # with a weak hand: -2 and -0.6 VP
    assert draft_choice({"decline_suspicion": 0}, WEAK, worst).startswith("decline")
    assert draft_choice({"decline_suspicion": 2}, WEAK, worst) == "keep Win Exactly Three"


def _numeric_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(TrickyCultistsConfig) if f.type in ("int", int)}


def test_every_numeric_field_is_tested_here_or_explained_in_bots_md() -> None:
    text = (ROOT / "docs" / "bots.md").read_text()
    section = text[text.index("### Tricky Cultists: config fields the heuristic does not weigh") :]
    section = section[: section.find("\n#", 1) if "\n#" in section[1:] else len(section)]
    bullets = [line for line in section.splitlines() if line.startswith("- `")]
    explained = {name for line in bullets for name in re.findall(r"`(\w+)`", line.split(":")[0])}
    missing = _numeric_fields() - set(CASES) - explained
    assert not missing, f"neither tested nor explained in docs/bots.md: {sorted(missing)}"
    assert not (set(CASES) & explained), "a field is both tested and called irrelevant"


def test_the_test_positions_are_what_they_claim() -> None:
    """The draft hands sit where the bot's trick estimate puts them, and a steal is legal."""
    state = drafting(MIDDLING, ["Win Last Trick", "Clean Hands"], {})
    assert state.hands[3] == sorted(card(c) for c in MIDDLING)
    act(state, 3, "keep Clean Hands")  # the position plays on
    assert steal_choice({}) == "steal the trick won by Red 1"
