"""The states an engine process issued lately, kept as objects, so that the next call on
one of them skips reading it back from its bytes.

A caller sends a table's state back exactly as the engine last returned it (the gateway
stores each Step's state and sends it with the table's next move), so most calls are on a
state this process has just written. Reading one back (checking its MAC, parsing its JSON,
restoring the object) was a third of an Apply's handler time; a clone of the kept object
is a fraction of that. What is not found here takes the ordinary path
(`serial.state_from_bytes`): a state from another replica, from before a restart, or
written by hand. So this is a shortcut to the same state, never a different answer:

- a state is found only by its exact bytes (looked up by the MAC that ends them, then
  compared whole), and those bytes were written from this very object;
- the kept object is never handed out, only clones of it, so no call can change it.

Bounded by count, oldest first out: each entry is the bytes (~2 KB) and the object
(~15 KB), so the default 2048 keeps the tables of a busy gateway for ~35 MB.
"""

from __future__ import annotations

import threading

from .game import State
from .serial import MAC_CHARS

DEFAULT_SIZE = 2048


class IssuedStates:
    """Bytes an engine issued -> the state they were written from."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        if size < 1:
            raise ValueError(f"keep at least one state, not {size}")
        self._size = size
        self._states: dict[bytes, tuple[bytes, State]] = {}
        self._lock = threading.Lock()  # eviction and insertion together; lookups need none

    def remember(self, data: bytes, state: State) -> None:
        """Keep `state` for `data`, the bytes just written from it; the caller must not
        change it afterwards (the server drops it once the answer is built)."""
        key = data[-MAC_CHARS:]
        with self._lock:
            states = self._states
            if key not in states and len(states) >= self._size:
                del states[next(iter(states))]
            states[key] = (data, state)

    def recall(self, data: bytes) -> State | None:
        """A fresh clone of the state `data` was written from, or None if not kept."""
        found = self._states.get(data[-MAC_CHARS:])
        if found is None or found[0] != data:
            return None
        return found[1].clone()

    def __len__(self) -> int:
        return len(self._states)
