"""Earlier positions of a live table, so the table page can play bot moves out one at a time.

Three bot moves land within a fraction of a second; the page used to jump from the position
before them to the one after. To show each move where it happened, the page asks for the
panel *at* each version in between (`/tables/<id>/panel?at=V`). The table keeps only its
newest state, so an earlier one is rebuilt with the rules library from the table's own
record (seed, config and the first V actions, rulings G-2), exactly as replays are
(`pages/replay.py`); live moves still only ever go through the engines.

Privacy: a position is shown as the asking token's seat saw it then (the engine's redacted
view, rulings G-3), or as a spectator; nothing a seat could not have watched live. The move
that led there is described by its public events and, for the action kinds whose label names
only public facts (`PUBLIC_MOVES`), by its label; any other move is "<seat> decided".

A per-process cache keeps the last rebuilt state of a few tables, so playing versions
V, V+1, V+2 forward applies one action each, not the whole game again.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import Any

from services.engines.core.game import GameSpec, State
from services.engines.registry import load_game
from services.platform.errors import PlatformError
from services.platform.store import Table, TableStore

MAX_TABLES = 32

# Action kinds (`detail.kind`) whose label tells only what every seat sees happen. Anything
# not listed (an agenda kept, a Codex card taken, a card chosen from a hand shown to one
# seat, a card taken from a searched deck) is described without its label.
PUBLIC_MOVES: dict[str, frozenset[str]] = {
    "crazy_cultists": frozenset(
        {
            "play",
            "pass",
            "counter",
            "done",
            "take_dark",
            "draw_main",
            "swap_hands",
            "discard_hand",
            "leave_hand",
            "pair",
            "discard",
        }
    ),
    "trash_cult": frozenset(
        {
            "add",
            "snackrifice_member",
            "snackrifice_hostages",
            "snackrifice_food",
            "convert_hostage",
            "opossum_plushie",
            "pigeon_thief",
            "poison_their_punch",
            "discard",
            "pass",
            "pick_cult",
            "protection_spell",
            "no_protection",
            "perk_target",
            "hide",
            "resolve",
            "lose_animals",
            "lose_food",
            "trash_member",
            "trash_hostage",
            "trash_food",
        }
    ),
    "tricky_cultists": frozenset({"play", "decline", "bonus", "trump", "give", "steal", "pass"}),
}


class PastStates:
    """Rebuilds a table's state at an earlier version; keeps the last one per table."""

    def __init__(self, size: int = MAX_TABLES) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, tuple[int, State]] = OrderedDict()

    def state_at(self, table: Table, actions: list[list[int]], version: int) -> State:
        """The position after `version` actions: a state the caller owns."""
        if not 0 <= version <= len(actions):
            raise PlatformError(404, "unknown_version", f"this table has versions 0-{len(actions)}")
        spec = _spec(table.game)
        with self._lock:
            cached = self._items.get(table.id)
        if cached is not None and cached[0] <= version:
            start, state = cached[0], cached[1].clone()
        else:
            start, state = (
                0,
                spec.new_state(spec.make_config(table.config), table.players, table.seed, table.deal_key),
            )
        for seat, action in actions[start:version]:
            state.apply(seat, action)
        with self._lock:
            self._items[table.id] = (version, state.clone())
            self._items.move_to_end(table.id)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return state


def _spec(game: str) -> GameSpec:
    return load_game(game)


def move_words(game: str, before: State, seat: int, action: int) -> tuple[str, bool]:
    """(what the move did, whether that is its label) in words every seat may read."""
    detail = before.action_detail(action)
    if detail.get("kind") in PUBLIC_MOVES.get(game, frozenset()):
        return before.action_label(action), True
    return "decided", False


def upto(log: list[dict[str, Any]], version: int) -> list[dict[str, Any]]:
    """The log entries of `version` and before: the log is read after the table record,
    so it may already hold the next moves' lines."""
    return [e for e in log if e.get("version", 0) <= version]


def last_move(store: TableStore, past: PastStates, table: Table) -> dict[str, Any] | None:
    """The move that made `table`'s version, in public words (the live panel's "last move"
    line). The action list is read after the record and may be longer (a bot moved in
    between): the move is the record's own, never a later one."""
    version = table.version
    actions = store.actions(table.id)[:version]
    if version == 0 or len(actions) < version:
        return None
    before = past.state_at(table, actions, version - 1)
    seat, action = actions[version - 1]
    events = [e for e in store.log_tail(table.id, 40) if e.get("version") == version]
    words, labelled = move_words(table.game, before, seat, action)
    return {"version": version, "seat": seat, "words": words, "labelled": labelled, "events": events}


def past_move(
    store: TableStore, past: PastStates, table: Table, version: int
) -> tuple[State, dict[str, Any] | None]:
    """The position at `version` and the move that led to it (None at version 0)."""
    actions = store.actions(table.id)
    if version == 0:
        return past.state_at(table, actions, 0), None
    before = past.state_at(table, actions, version - 1)
    seat, action = actions[version - 1]
    events = [e for e in store.log(table.id) if e.get("version") == version]
    words, labelled = move_words(table.game, before, seat, action)
    state = past.state_at(table, actions, version)  # one action on from the cached `before`
    return state, {"version": version, "seat": seat, "words": words, "labelled": labelled, "events": events}


_TRICK = re.compile(r"wins the trick with (?P<top>[^(]+?) \((?P<cards>[^)]*)\)")


def last_trick(game: str, view: dict[str, Any], log: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Tricky Cultists' last completed trick, kept in view until the next lead: its winner
    and its cards in playing order, read from the newest `trick` event of `log` (the public
    log) and matched to the round's played cards in `view` (so each card keeps its id, suit
    and value). None while a trick is being played, or when that trick is from an earlier
    round (its cards are no longer among this round's played ones)."""
    if game != "tricky_cultists" or view.get("trick") or not view.get("played"):
        return None
    entry = next((e for e in reversed(log) if e.get("kind") == "trick"), None)
    found = _TRICK.search(entry["text"]) if entry else None
    if found is None or entry is None:
        return None
    by_name = {c["name"]: c for c in view["played"]}
    names = [n.strip() for n in found["cards"].split(",")]
    if not all(n in by_name for n in names):
        return None
    return {"winner": entry["seat"], "top": found["top"].strip(), "cards": [by_name[n] for n in names]}
