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
