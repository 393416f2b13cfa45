"""The states an engine process issued lately, kept as objects, so that the next call on
one of them skips reading it back from its bytes.

A caller sends a table's state back exactly as the engine last returned it (the gateway
stores each Step's state and sends it with the table's next move), so most calls are on a
state this process has just written. Reading one back (checking its MAC, parsing its JSON,
restoring the object) was a third of an Apply's handler time in a loop, and two fifths as
the engine serves. An Apply is handed the kept object itself, and a View a clone. What is not
found here takes the ordinary path (`serial.state_from_bytes`): a state from another
replica, from before a restart, or written by hand. So this is a shortcut to the same
state, never a different answer:

- a state is found only by its exact bytes (looked up by the MAC that ends them, then
  compared whole), and those bytes were written from this very object;
- the kept object is handed out either as a clone (`recall`), or itself to one caller
  that is about to change it (`take`, Apply's), and then it is no longer kept: no call
  ever sees a state another call changed. A second move on the same bytes (a retry)
  reads them back;
- the legal actions kept beside a state are the lists its answer carried, made from
  that object just before it was kept, so Apply checks a move against them instead of
  asking the rules again (`State.apply`'s `legal`).

Bounded by count, oldest first out. A move takes its table's entry and the answer adds the
next, so what is kept is about one state per table in play: each is the bytes (~2 KB) and
the object (~15 KB), so the default 2048 tables take up to ~35 MB.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .game import State
from .serial import MAC_CHARS

DEFAULT_SIZE = 2048


class IssuedStates:
    """Bytes an engine issued -> the state they were written from."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"keep at least one state, not {size}")
        self._size = size
        # An OrderedDict, not a dict: dropping a plain dict's oldest entry (`next(iter(d))`)
        # walks past every slot freed since its last resize, ~10 us per call once the engine
        # is full of finished games' states, where this drops its oldest in O(1).
        self._states: OrderedDict[bytes, tuple[bytes, State, dict[int, list[int]]]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, data: bytes, state: State, legal: dict[int, list[int]] | None = None) -> None:
        """Keep `state` for `data`, the bytes just written from it, with the legal actions
        of the seats it asks (seat -> `legal_actions(seat)`) where the caller has them; the
        caller must not read or change any of it afterwards (the server keeps a state once
        its answer is built)."""
        key = data[-MAC_CHARS:]
        with self._lock:
            states = self._states
            if key not in states and len(states) >= self._size:
                states.popitem(last=False)
            states[key] = (data, state, legal or {})

    def recall(self, data: bytes) -> State | None:
        """A fresh clone of the state `data` was written from, or None if not kept."""
        with self._lock:  # so no `take` hands the object out to be changed mid-copy
            found = self._states.get(data[-MAC_CHARS:])
            if found is None or found[0] != data:
                return None
            return found[1].clone()

    def take(self, data: bytes) -> tuple[State, dict[int, list[int]]] | None:
        """The state `data` was written from itself, no longer kept (so the caller may
        change it without a copy), with the legal actions kept beside it; or None if not
        kept. A move is made once on a state: the next one comes with the bytes this move
        issues."""
        key = data[-MAC_CHARS:]
        with self._lock:
            found = self._states.get(key)
            if found is None or found[0] != data:
                return None
            del self._states[key]
        return found[1], found[2]

    def __len__(self) -> int:
        return len(self._states)
