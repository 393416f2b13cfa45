"""A seat's view as a fixed-length vector: feature hashing of the engine's own view.

The vector is built only from `state.view(seat)`, the very dict the gRPC View serves that
seat (G-3), so it can hold nothing that seat may not see. Each leaf of the view becomes
features keyed by its path: a number adds its value at `path` and a one at `path=value`; a
string, a bool or null adds a one at `path=value`. Lists of cards are bags (`hand[]`, order
ignored); the per-seat lists (`seats`, `players`) and Tricky Cultists's `trick` (in play
order: its first card is the led suit, and which seat played which card follows from the
`leader`) keep their index. Keys are hashed (CRC-32,
stable across runs and machines) into `OBS_SIZE` slots: views differ in shape between
games and phases, and hashing gives every game one fixed layout without a hand schema that
would drift from the rules.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

OBS_SIZE = 1024
POSITIONAL = frozenset({"seats", "players", "trick"})


def encode_view(view: dict[str, Any], size: int = OBS_SIZE) -> np.ndarray:
    """The float32 vector of one seat's view."""
    out = np.zeros(size, dtype=np.float32)
    _walk(view, "", "", out, size)
    return out


def _slot(key: str, size: int) -> int:
    return zlib.crc32(key.encode()) % size


def _walk(value: Any, path: str, key: str, out: np.ndarray, size: int) -> None:
    kind = type(value)
    if kind is dict:
        for k in sorted(value):
            _walk(value[k], f"{path}.{k}", k, out, size)
    elif kind is list:
        if key in POSITIONAL:
            for i, item in enumerate(value):
                _walk(item, f"{path}[{i}]", "", out, size)
        else:
            out[_slot(f"{path}#", size)] += len(value)
            for item in value:
                _walk(item, f"{path}[]", "", out, size)
    elif kind is int or kind is float:
        out[_slot(path, size)] += float(value)
        out[_slot(f"{path}={value}", size)] += 1.0
    else:  # str, bool, None
        out[_slot(f"{path}={value}", size)] += 1.0


# --- the same vector without the view -------------------------------------------------------
# A game's features.py (Trash Cult's, Crazy Cultists's) lists its view's leaves straight
# from the state, the policy bot's hot path, as parallel lists of slots and values (a slot
# may come twice: the vector is the sum, as `_walk`'s `+=` makes it): the keys are the ones
# `_walk` would hash, each hashed once per process, so building the view dict and
# formatting its paths (most of a decision's CPU) is skipped. Their tests check the two
# vectors are equal over many states (tests/envs/test_view_features.py).

_SLOTS: dict[str, int] = {}
_NUMBERS: dict[tuple[str, int], tuple[int, int]] = {}  # (path, n) -> slots of path, path=n
_CHILDREN: dict[tuple[str, str], str] = {}  # (path, key) -> path.key


def slot(key: str) -> int:
    """`_slot(key, OBS_SIZE)`, remembered."""
    s = _SLOTS.get(key)
    if s is None:
        s = _SLOTS[key] = zlib.crc32(key.encode()) % OBS_SIZE
    return s


def number(idx: list[int], values: list[float], path: str, value: Any) -> None:
    """What `_walk` adds for a leaf at `path`; a whole number's two slots from a table."""
    if type(value) is int:
        at = _NUMBERS.get((path, value))
        if at is None:
            at = _NUMBERS[(path, value)] = (slot(path), slot(f"{path}={value}"))
        idx.append(at[0])
        values.append(float(value))
        idx.append(at[1])
        values.append(1.0)
    else:
        leaf(idx, values, path, value)


def leaf(idx: list[int], values: list[float], path: str, value: Any) -> None:
    """What `_walk` adds for a number, string, bool or None at `path`."""
    kind = type(value)
    if kind is int or kind is float:
        idx.append(slot(path))
        values.append(float(value))
    idx.append(slot(f"{path}={value}"))
    values.append(1.0)


def walk(idx: list[int], values: list[float], value: Any, path: str, key: str) -> None:
    """`_walk` into the lists: for the small parts of a view built as the view builds them
    (a pending decision's), where writing each leaf by hand would only copy the rules."""
    kind = type(value)
    if kind is dict:
        for k in value:
            child = _CHILDREN.get((path, k))
            if child is None:
                child = _CHILDREN[(path, k)] = f"{path}.{k}"
            walk(idx, values, value[k], child, k)
    elif kind is list:
        if key in POSITIONAL:
            for i, item in enumerate(value):
                walk(idx, values, item, f"{path}[{i}]", "")
        else:
            idx.append(slot(f"{path}#"))
            values.append(float(len(value)))
            for item in value:
                walk(idx, values, item, f"{path}[]", "")
    else:
        number(idx, values, path, value)


def name_slots(path: str, names: tuple[str, ...] | list[str]) -> tuple[int, ...]:
    """The slot of each name as an item of the bag at `path` (`path[]=name`), by index: a
    zone of cards is added by its kinds, one table read each."""
    return tuple(slot(f"{path}[]={name}") for name in names)
