"""Tricky Cultists positions for scenario tests, written in the JSON state form.

Cards are named as the book prints them ("Red 7"); ids follow cards.py for the default
deck. `round_position` builds a round in trick play: given each seat's hand and the tricks
already won (explicit top cards, or a count filled from the high Purple, Green and Red
cards), it stacks filler cards under each top and deals every card left to the Codexes
not given explicitly,
so that all 52 cards are placed exactly once and `from_json` accepts the position.
"""

from __future__ import annotations

from typing import Any

from services.engines.tricky_cultists import GAME
from services.engines.tricky_cultists.cards import AGENDAS
from services.engines.tricky_cultists.rules import TrickyCultistsState
from tests.support.positions import act, position

SUITS = ("Blue", "Red", "Green", "Purple")
RANKS = 13
PLAYERS = 4

# A last trick that needs no decision after it: seat 0 leads Blue 13 and wins; seat 3's
# Blue 4 is second and triggers Blue, which has nothing to swap from an empty hand.
LAST_HANDS = (["Blue 13"], ["Blue 2"], ["Blue 3"], ["Blue 4"])


def card(name: str) -> int:
    suit, rank = name.split()
    return SUITS.index(suit) * RANKS + int(rank) - 1


def cards(names: list[str] | tuple[str, ...]) -> list[int]:
    return [card(n) for n in names]


def round_position(
    hands: tuple[list[str], ...] | list[list[str]] = LAST_HANDS,
    tops: tuple[Any, ...] | list[Any] = (3, 2, 2, 2),
    trick: list[str] | tuple[str, ...] = (),
    leader: int = 0,
    agendas: tuple[str | None, ...] | list[str | None] = (None, None, None, None),
    codex: dict[int, list[str]] | None = None,
    trump: str | None = None,
    bonus: str | None = None,
    suspicion: list[int] | None = None,
    abilities: list[int] | None = None,
    round_index: int = 0,
    config: dict[str, Any] | None = None,
    **fields: Any,
) -> TrickyCultistsState:
    """A round in trick play; `tops[s]` is a list of top-card names or a count of tricks."""
    hand_ids = [sorted(cards(h)) for h in hands]
    trick_ids = cards(trick)
    named_tops = [cards(t) for t in tops if not isinstance(t, int)]
    named_codex = [cards(c) for c in (codex or {}).values()]
    used = {c for zone in [*hand_ids, trick_ids, *named_tops, *named_codex] for c in zone}
    pool = [c for c in range(len(SUITS) * RANKS) if c not in used]
    won = []
    for seat_tops in tops:
        pile: list[int] = []
        top_ids = [pool.pop() for _ in range(seat_tops)] if isinstance(seat_tops, int) else cards(seat_tops)
        for top in top_ids:
            pile.append(top)
            pile.extend(pool.pop() for _ in range(PLAYERS - 1))
        won.append(pile)
    given = {seat: cards(names) for seat, names in (codex or {}).items()}
    codex_ids = [given.get(seat, []) for seat in range(PLAYERS)]
    others = [seat for seat in range(PLAYERS) if seat not in given]
    for i, c in enumerate(pool):
        codex_ids[others[i % len(others)]].append(c)
    agenda_ids = [AGENDAS.index(a) if a else -1 for a in agendas]
    tricks_done = sum(len(p) for p in won) // PLAYERS
    suit = {None: -1, **{s: i for i, s in enumerate(SUITS)}}
    doc: dict[str, Any] = {
        "round": round_index,
        "start": round_index % PLAYERS,
        "phase": "play",
        "actor": (leader + len(trick_ids)) % PLAYERS,
        "hands": hand_ids,
        "codex": [sorted(c) for c in codex_ids],
        "trick": trick_ids,
        "leader": leader,
        "won": won,
        "last_winner": leader,
        "trump": suit[trump],
        "bonus": suit[bonus],
        "suspicion": suspicion or [0, 0, 0, 0],
        "abilities": abilities or [0, 0, 0, 0],
        "agendas": agenda_ids,
        "pack": [],
        "agenda_out": [a for a in range(len(AGENDAS)) if a not in agenda_ids],
        "breakdown": [[[0, 0, 0, 0] for _ in range(PLAYERS)] for _ in range(round_index)],
        "agenda_met": no_agendas(round_index),
        "turn": tricks_done + 1,
    }
    doc.update(fields)
    return position(GAME, players=PLAYERS, config=config, **doc)  # type: ignore[return-value]


def play(state: TrickyCultistsState, *names: str) -> None:
    """Play cards in turn order from the seat to act."""
    for name in names:
        act(state, state.actor, f"play {name}")


def draft_position(
    kept: dict[int, str | None], pack: list[str], round_index: int = 0, config: dict[str, Any] | None = None
) -> TrickyCultistsState:
    """The draft with `kept` seats done (None: declined) and `pack` in the next seat's hands.

    Agenda ids are taken per kind from the copies in the deck (config `agenda_copies`).
    """
    copies = (config or {}).get("agenda_copies", 1)
    free = {kind: [kind + len(AGENDAS) * i for i in range(copies)] for kind in range(len(AGENDAS))}
    agendas = [-1] * PLAYERS
    for seat, name in kept.items():
        if name is not None:
            agendas[seat] = free[AGENDAS.index(name)].pop(0)
    pack_ids = [free[AGENDAS.index(name)].pop(0) for name in pack]
    start = round_index % PLAYERS
    out = [a for ids in free.values() for a in ids]
    return position(
        GAME,
        players=PLAYERS,
        config=config,
        round=round_index,
        start=start,
        actor=(start + len(kept)) % PLAYERS,
        agendas=agendas,
        pack=pack_ids,
        agenda_out=out,
        suspicion=[1 if seat in kept and kept[seat] is None else 0 for seat in range(PLAYERS)],
        breakdown=[[[0, 0, 0, 0] for _ in range(PLAYERS)] for _ in range(round_index)],
        agenda_met=no_agendas(round_index),
    )  # type: ignore[return-value]


def no_agendas(rounds: int) -> list[list[list[Any]]]:
    """`agenda_met` for `rounds` earlier rounds in which no seat kept an agenda."""
    return [[[-1, None] for _ in range(PLAYERS)] for _ in range(rounds)]
