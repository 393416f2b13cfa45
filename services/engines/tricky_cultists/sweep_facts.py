"""Tricky Cultists' facts for the sweeps' breakdowns (services/balance/sweeps/facts.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.facts import played
from ..core.game import State


def facts(state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]) -> dict[str, Any]:
    """Team of each seat, the partnership of bots it belongs to, and the agendas it kept.

    Teams come from the game spec (`GameSpec.teams`, TK-2). A partnership is the pair of
    bot names sharing a team, so a mixed line-up shows whether "heuristic+random" beats
    "random+random".
    Agendas kept in the draft are public once revealed (TK-4); every round's keep counts.
    Each scored round's judgement (the view's `agenda_result`) gives the agenda success
    counts; a tie that decided it neither way (TK-3) counts as tried, not met.
    """
    view = state.view(None)
    seats = view.get("seats", [])
    outcomes: dict[str, list[int]] = {}
    for scored in view.get("scores", []):
        for seat in scored.get("seats", []):
            if seat.get("agenda_kept"):
                counts = outcomes.setdefault(str(seat["agenda_kept"]), [0, 0])
                counts[0] += seat.get("agenda_result") == "met"
                counts[1] += 1
    groups: dict[str, list[str]] = {}
    if len(seats) == state.num_players:
        team_seats = state.spec.team_seats(state.num_players)  # GameSpec.teams (TK-2)
        teams = [next(t for t, members in enumerate(team_seats) if s in members) for s in range(len(seats))]
        groups["team"] = [f"team {t}" for t in teams]
        partners = {
            t: "+".join(sorted(bots[s] for s in range(len(teams)) if teams[s] == t)) for t in set(teams)
        }
        groups["partnership"] = [partners[t] for t in teams]

    def agenda(detail: dict[str, Any]) -> str | None:
        return str(detail["agenda"]) if detail.get("kind") == "keep" and "agenda" in detail else None

    return {
        "groups": groups,
        "played": played(state, actions, agenda),
        "outcomes": dict(sorted(outcomes.items())),
    }
