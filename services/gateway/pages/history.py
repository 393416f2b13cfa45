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
only public facts (the game's presentation's `public_moves`), by its label; any other move
is "<seat> decided".

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

from .present import presentation

MAX_TABLES = 32


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
    if detail.get("kind") in presentation(game).public_moves:
        return before.action_label(action), True
    return "decided", False


# The verbs the public labels start with ("play Favor 3", "give seat 3 a Suspicion"): a move
# line reads as a sentence, "Steady bot 1 plays Favor 3", "You play Favor 3". A label that
# starts otherwise ("Pigeon Thief: rob seat 0") is told as "<name>: <label>".
VERBS = frozenset(
    [
        "play",
        "pass",
        "discard",
        "let",
        "add",
        "resolve",
        "lose",
        "snackrifice",
        "trash",
        "take",
        "lead",
        "give",
        "set",
        "decline",
        "steal",
    ]
)
_SEAT = re.compile(r"\bseat (\d+)('s)?")


def sentence(label: str, seat: int, names: list[str], me: int) -> str:
    """A public move's label as a sentence about who made it, with seats named ("you" for
    the reader's own seat): "play Infernal Inferno on seat 0" by seat 1, read by seat 0, is
    "Steady bot 1 plays Infernal Inferno on you"."""

    rest = name_seats(label, names, me)
    verb, _, tail = rest.partition(" ")
    who = "You" if seat == me else names[seat]
    if verb not in VERBS:
        return f"{who}: {rest}"
    if seat != me:
        verb = verb + "es" if verb.endswith("ss") else verb + "s"
    else:
        tail = re.sub(r"\byou\b", "yourself", tail)  # "give seat 0 a Suspicion" by seat 0
    return f"{who} {verb} {tail}".strip()


def name_seats(text: str, names: list[str], me: int) -> str:
    """The engines' "seat 2" (and "seat 2's") as the seat's name, "you" ("your") for `me`,
    in the second person where "you" acts; "3 card(s)" as "3 cards". common.js's
    `nameSeats` gives the page the same words (tests/browser/test_words.py)."""

    def named(found: re.Match[str]) -> str:
        n = int(found.group(1))
        who = "you" if n == me else names[n] if n < len(names) else found.group(0)
        return ("your" if n == me else f"{who}'s") if found.group(2) else who

    text = re.sub(r"^your\b", "Your", second_person(_SEAT.sub(named, text)))
    return _CARDS.sub(lambda m: f"{m.group(1)} card{'' if m.group(1) == '1' else 's'}", text)


_CARDS = re.compile(r"\b(\d+) card\(s\)")


# A clause whose subject is "you": its verbs, third person in the engines' words ("seat 0
# goes over 9 and loses the stack"), agree with "you" ("you go over 9 and lose the stack").
_YOU_CLAUSE = re.compile(r"(^|[;:] )you ([^;:]*)")
_AND_VERB = re.compile(r"\b(and|then) ([a-z]+s)\b")
_IRREGULAR = {"is": "are", "has": "have", "goes": "go", "does": "do", "was": "were"}


def _base(verb: str) -> str:
    """A third-person verb's plain form: "passes" -> "pass", "wins" -> "win"."""
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if re.search(r"(ch|sh|ss|x|zz)es$", verb):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def second_person(text: str) -> str:
    """`text` with every clause whose subject is "you" in the second person: its first verb
    and the verbs joined to it by "and", "their"/"its" for the subject's own things, and "yourself" as its object."""

    def clause(found: re.Match[str]) -> str:
        lead, rest = found.group(1), found.group(2)
        verb, space, tail = rest.partition(" ")
        tail = _AND_VERB.sub(lambda m: f"{m.group(1)} {_base(m.group(2))}", tail)
        tail = re.sub(r"\b(their|its) (Codex|Stash|turn|hand|Shrine)\b", r"your \2", tail)
        tail = re.sub(r"\byou\b", "yourself", tail)
        you = "You" if lead == "" else "you"
        return f"{lead}{you} {_base(verb)}{space}{tail}"

    return _YOU_CLAUSE.sub(clause, text)


def _target(before: State, action: int, labelled: bool) -> int | None:
    """The seat a public move aims at (a card played on a seat, a seat robbed or given a
    Suspicion), so the board can mark it; None for other moves."""
    if not labelled:
        return None
    detail = before.action_detail(action)
    for key in ("target", "seat"):
        if isinstance(detail.get(key), int) and detail[key] >= 0:
            return int(detail[key])
    return None


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
    target = _target(before, action, labelled)
    return {
        "version": version, "seat": seat, "words": words, "labelled": labelled, "events": events, "target": target,
    }  # fmt: skip


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
    target = _target(before, action, labelled)
    state = past.state_at(table, actions, version)  # one action on from the cached `before`
    move = {"version": version, "seat": seat, "words": words, "labelled": labelled, "events": events}
    return state, {**move, "target": target}


def last_trick(game: str, view: dict[str, Any], log: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The last completed trick, kept in view until the next lead, for a game that has
    tricks (its presentation's `last_trick`); None for any other game."""
    found = presentation(game).last_trick
    return found(view, log) if found is not None else None
