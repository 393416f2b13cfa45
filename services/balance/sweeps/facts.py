"""Per-game facts beyond the GameRecord, read from a finished game for the balance breakdowns.

A GameRecord says who won and how long it took; designers also ask "is a cult too
strong?", "does one partnership of bots carry?", "does playing this card win?". Each game
answers through one hook here, looked up by game name, that reads only public things —
the final state's spectator view (`state.view(None)`, rulings G-3), the game's own
`action_detail` for the recorded actions, and the line-up — so sweeps never depend on an
engine's private fields and an engine refactor cannot silently change a report.

Every hook returns the same two-part shape, which `aggregate.py` handles generically:

    {"groups": {"cult": ["Rat", "Skunk", ...]},        # one label per seat, by breakdown
     "played": {"Pigeon Thief": [0, 2], ...},          # label -> seats that played it
     "outcomes": {"Win Most Tricks": [3, 5], ...}}     # optional: label -> [met, tried]

`groups` become win-rate tables (by cult, team, partnership); `played` becomes play rate
and win-when-played rate per card or agenda; `outcomes` become success rates (Tricky
Cultists' agendas: met in how many of the rounds a seat kept one). A hook leaves out what
the state does not tell; a game without a hook simply gets no such tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from services.engines.core.game import State

FactsHook = Callable[[State, Sequence[Sequence[int]], Sequence[str]], dict[str, Any]]


def _played(state: State, actions: Sequence[Sequence[int]], label: Callable[[dict[str, Any]], str | None]):
    """label -> sorted seats that took an action the game describes with that label."""
    seats: dict[str, set[int]] = {}
    detail = state.action_detail
    cache: dict[int, str | None] = {}
    for seat, action in actions:
        if action not in cache:
            cache[action] = label(detail(action))
        name = cache[action]
        if name is not None:
            seats.setdefault(name, set()).add(seat)
    return {name: sorted(s) for name, s in sorted(seats.items())}


# Trash Cult: action kinds that are playing a card from hand (TC-6, TC-10..TC-15), by card.
_TRASH_CULT_CARDS = {
    "pigeon_thief": "Pigeon Thief",
    "poison_their_punch": "Poison Their Punch",
    "opossum_plushie": "Opossum Plushie",
    "convert_hostage": "Convert Hostage",
    "protection_spell": "Protection Spell",
    "hide": "Hide",
}


def _trash_cult_play(detail: dict[str, Any]) -> str | None:
    kind = detail.get("kind")
    if kind == "add":
        return str(detail.get("card"))
    return _TRASH_CULT_CARDS.get(str(kind))


def trash_cult_facts(state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]) -> dict[str, Any]:
    """Cult of each seat (from the public view) and which card kinds each seat played.

    The action-detail `card` of an "add" names the animal or food kind put in play; it is
    a public play, so counting it leaks nothing. A seat whose cult is still unpicked (a
    game capped during the pick phase) is labelled "none".
    """
    view = state.view(None)
    cults = [seat.get("cult") or "none" for seat in view.get("seats", [])]
    out: dict[str, Any] = {"groups": {}, "played": _played(state, actions, _trash_cult_play)}
    if len(cults) == state.num_players:
        out["groups"]["cult"] = cults
    return out


def tricky_cultists_facts(
    state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]
) -> dict[str, Any]:
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
        "played": _played(state, actions, agenda),
        "outcomes": dict(sorted(outcomes.items())),
    }


def crazy_cultists_facts(
    state: State, actions: Sequence[Sequence[int]], bots: Sequence[str]
) -> dict[str, Any]:
    """Cards each seat played, named by the game's own action detail.

    A "play" names its card; answering with a Counter-Spell is its own action kind with no
    card field, so it is labelled by hand. Draws, takes, discards and passes are not plays.
    The view has no per-seat grouping beyond the seat itself, so there are no groups.
    """

    def card(detail: dict[str, Any]) -> str | None:
        kind = detail.get("kind")
        if kind == "play" and detail.get("card"):
            return str(detail["card"])
        if kind == "counter":
            return "counter_spell"
        return None

    return {"groups": {}, "played": _played(state, actions, card)}


FACTS: dict[str, FactsHook] = {
    "trash_cult": trash_cult_facts,
    "tricky_cultists": tricky_cultists_facts,
    "crazy_cultists": crazy_cultists_facts,
}


def facts_hook(game: str) -> FactsHook | None:
    return FACTS.get(game)
