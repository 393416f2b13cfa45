"""Exact Crazy Cultists positions, written by card name instead of card id.

`table(...)` hands out real card ids of the named kinds, puts every other card in the decks
(the named `deck_top` cards on top, first named drawn first) and restores the position
through `tests.support.positions.position`, so every scenario passes `from_json`'s checks.
"""

from __future__ import annotations

from typing import Any

from services.engines.core.game import State
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.cards import KIND_OF_NAME, NAMES, kind_table
from tests.support.positions import act, legal_labels, position


def table(
    players: int = 4,
    config: dict[str, Any] | None = None,
    *,
    hands: dict[int, list[str]] | None = None,
    stacks: dict[int, list[str]] | None = None,
    spire: dict[int, list[str]] | None = None,
    poly: tuple[int, ...] = (),
    deck_top: tuple[str, ...] = (),
    discard: tuple[str, ...] = (),
    dark_top: tuple[str, ...] = (),
    dark_discard: tuple[str, ...] = (),
    **fields: Any,
) -> State:
    kinds, n_main = kind_table(GAME.make_config(config))
    pool: dict[int, list[int]] = {}
    for card, kind in enumerate(kinds):
        pool.setdefault(kind, []).append(card)

    def take(names: Any) -> list[int]:
        return [pool[KIND_OF_NAME[name]].pop() for name in names]

    hands = hands or {}
    stacks = stacks or {}
    spire = spire or {}
    doc = {
        "hands": [take(hands.get(s, [])) for s in range(players)],
        "stacks": [take(stacks.get(s, [])) for s in range(players)],
        "spire": [take(["black_spire", *spire[s]]) if s in spire else [] for s in range(players)],
        "poly": [take(["polymorphization"])[0] if s in poly else -1 for s in range(players)],
        "discard": take(discard),
        "dark_discard": take(dark_discard),
    }
    top, dark = take(deck_top), take(dark_top)
    rest = sorted(c for cards in pool.values() for c in cards)
    doc["deck"] = [c for c in rest if c < n_main] + top[::-1]
    doc["dark_deck"] = [c for c in rest if c >= n_main] + dark[::-1]
    doc.update(fields)
    return position(GAME, players=players, config=config, **doc)


def names(state: State, cards: list[int]) -> list[str]:
    return [NAMES[state.kind[c]] for c in cards]


def pass_window(state: State) -> None:
    """Every seat still asked in the Counter-Spell window passes."""
    while state.pending is not None and state.pending["kind"] == "counter":
        act(state, state.to_act()[0], "pass")


__all__ = ["act", "legal_labels", "names", "pass_window", "table"]
