"""Trash Cult positions written with card names instead of ids.

`table(...)` hands out unused ids of the named kinds to each zone and puts every card left
over in the deck (or trash), then restores the JSON form through `positions.position`, so a
scenario reads like the table it describes and still passes the same validation as a state
arriving over gRPC.
"""

from __future__ import annotations

from typing import Any

from services.engines.core.game import State
from services.engines.trash_cult import GAME
from services.engines.trash_cult.cards import ACTIVE_KINDS, CULTS, KIND_BY_NAME, KIND_NAMES
from tests.support.positions import position

Seats = dict[int, list[str]]


def table(
    players: int = 4,
    cults: list[str] | None = None,
    hands: Seats | None = None,
    members: Seats | None = None,
    hostages: Seats | None = None,
    shrine: Seats | None = None,
    stash: Seats | None = None,
    trash: list[str] | None = None,
    deck: list[str] | None = None,
    rest: str | int = "deck",
    chaos: list[str] | None = None,
    chaos_discard: list[str] | None = None,
    config: dict[str, Any] | None = None,
    seed: int = 0,
    **fields: Any,
) -> State:
    """A position: `deck` and `chaos` list the top cards, top first; `members` names
    a converted member with a trailing "+" (a Convert Hostage is tucked under it);
    cards not named go to the bottom of the deck, or to the trash (`rest="trash"`), or to
    the hand of seat `rest` (an int)."""
    config = {"cults": cults or list(CULTS[:players]), **(config or {})}
    kinds = GAME.make_config(config).kinds
    free: dict[int, list[int]] = {}
    for card, kind in enumerate(kinds):
        free.setdefault(kind, []).append(card)

    def ids(names: list[str]) -> list[int]:
        return [free[KIND_BY_NAME[name]].pop() for name in names]

    def per_seat(named: Seats | None) -> list[list[int]]:
        return [ids((named or {}).get(s, [])) for s in range(players)]

    tucked: list[list[int]] = []
    member_ids: list[list[int]] = []
    for s in range(players):
        names = (members or {}).get(s, [])
        member_ids.append(ids([n.rstrip("+") for n in names]))
        tucked.append([ids(["Convert Hostage"])[0] if n.endswith("+") else -1 for n in names])
    zones = {
        "hands": per_seat(hands),
        "members": member_ids,
        "tucked": tucked,
        "hostages": per_seat(hostages),
        "shrine": per_seat(shrine),
        "stash": per_seat(stash),
        "trash": ids(trash or []),
        "chaos_discard": ids(chaos_discard or []),
    }
    top = ids(deck or [])[::-1]
    chaos_top = ids(chaos or [])[::-1]
    active_left = sorted(c for k, cards in free.items() if k < ACTIVE_KINDS for c in cards)
    chaos_left = sorted(c for k, cards in free.items() if k >= ACTIVE_KINDS for c in cards)
    zones["deck"] = top
    if rest == "trash":
        zones["trash"] += active_left
    elif isinstance(rest, int):
        zones["hands"][rest] += active_left
    else:
        zones["deck"] = active_left + top
    zones["chaos_deck"] = chaos_left + chaos_top
    zones.update(fields)
    return position(GAME, players=players, seed=seed, config=config, **zones)


def names(state: State, zone: list[int]) -> list[str]:
    """Kind names of a zone's cards, sorted, for order-free comparisons."""
    kinds = state.config.kinds
    return sorted(KIND_NAMES[kinds[c]] for c in zone)


def seat_names(state: State, field: str, seat: int) -> list[str]:
    return names(state, getattr(state, field)[seat])
