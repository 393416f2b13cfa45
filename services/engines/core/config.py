"""Game configs are frozen dataclasses whose defaults come from rulings.md.

Sweeps, the CLI's `--set key=value`, the gateway's JSON bodies and the protobuf config
messages all arrive as a mapping of field name to value; `config_from_mapping` is the one
place that turns such a mapping into a config, so every entry point refuses the same bad
input with the same message.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from .errors import BadConfig

C = TypeVar("C")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def coerce_value(name: str, kind: Any, value: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [k for k in typing.get_args(kind) if k is not type(None)]
        if value is None or value == "":
            return None
        return coerce_value(name, options[0], value)
    if origin is tuple:
        (inner, *_rest) = typing.get_args(kind)
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, (list, tuple)):
            raise BadConfig(f"config field {name!r} wants a list, got {value!r}")
        return tuple(coerce_value(name, inner, v) for v in value)
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        raise BadConfig(f"config field {name!r} wants true or false, got {value!r}")
    if kind is int:
        if isinstance(value, bool):
            raise BadConfig(f"config field {name!r} wants a whole number, got {value!r}")
        try:
            as_int = int(value)
        except (TypeError, ValueError):
            raise BadConfig(f"config field {name!r} wants a whole number, got {value!r}") from None
        if isinstance(value, float) and value != as_int:
            raise BadConfig(f"config field {name!r} wants a whole number, got {value!r}")
        return as_int
    if kind is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise BadConfig(f"config field {name!r} wants a number, got {value!r}") from None
    if kind is str:
        if not isinstance(value, (str, int)):
            raise BadConfig(f"config field {name!r} wants text, got {value!r}")
        return str(value)
    raise BadConfig(f"config field {name!r} has an unsupported type {kind!r}")


@functools.cache
def field_types(cls: type) -> tuple[dict[str, Any], frozenset[str]]:
    """Resolved field types, once per class: every state restore builds a config, and
    resolving string annotations costs more than the rest of the restore."""
    return typing.get_type_hints(cls), frozenset(f.name for f in dataclasses.fields(cls))


def config_from_mapping(cls: type[C], values: Mapping[str, Any] | None) -> C:
    """Build `cls` from defaults plus `values`, refusing unknown fields and wrong kinds.

    After construction the dataclass's own `validate()` (if any) checks ranges, so a
    config object that exists is always a playable one.
    """
    values = dict(values or {})
    hints, fields = field_types(cast(type, cls))  # (mypy does not count type[C] as hashable)
    unknown = sorted(set(values) - fields)
    if unknown:
        raise BadConfig(f"unknown config field(s) {', '.join(unknown)}; known: {', '.join(sorted(fields))}")
    coerced = {k: coerce_value(k, hints[k], v) for k, v in values.items()}
    config = cls(**coerced)
    validate = getattr(config, "validate", None)
    if validate is not None:
        validate()
    return config


def config_to_dict(config: Any) -> dict[str, Any]:
    """Plain JSON-ready dict (tuples become lists)."""
    out = {}
    for f in dataclasses.fields(config):
        v = getattr(config, f.name)
        out[f.name] = list(v) if isinstance(v, tuple) else v
    return out


def parse_set_options(pairs: list[str]) -> dict[str, str]:
    """`["a=1", "b=x"]` (the CLI's repeated --set) into a mapping; values stay strings."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise BadConfig(f"--set wants key=value, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


# How far a number in a config may stray from its ruling's default: `LIMIT_FACTOR` times
# the default's size, and never less than `LIMIT_FLOOR` (so a field defaulting to 0 or 1
# still has room). A config class may name tighter or looser bounds per field in a
# `LIMITS` class attribute, and the least value its rules take where that is more than 0
# in `LEAST` (what its `validate` refuses below it), so the published bounds are the
# rules' own for every field on its own. Without a bound, one request could ask for a deck
# of a million cards: megabytes of state per table and seconds per move (issue 15).
LIMIT_FACTOR = 4
LIMIT_FLOOR = 10


@functools.cache
def config_limits(cls: type) -> dict[str, tuple[int, int]]:
    """(minimum, maximum) of every whole-number field of a config class. A field whose
    default is not negative is a count and stays at or above 0; the game's own `validate`
    may still refuse more (a hand larger than its limit...)."""
    hints, _ = field_types(cls)
    explicit: Mapping[str, tuple[int, int]] = getattr(cls, "LIMITS", {})
    least: Mapping[str, int] = getattr(cls, "LEAST", {})
    out: dict[str, tuple[int, int]] = {}
    for f in dataclasses.fields(cls):
        if hints[f.name] is not int:
            continue
        if f.name in explicit:
            out[f.name] = explicit[f.name]
            continue
        default = f.default if isinstance(f.default, int) else 0
        bound = max(LIMIT_FACTOR * abs(default), LIMIT_FLOOR)
        out[f.name] = (least.get(f.name, -bound if default < 0 else 0), bound)
    return out


def check_limits(cls: type, values: Mapping[str, Any]) -> None:
    """BadConfig naming the first field of `values` outside its published bounds."""
    limits = config_limits(cls)
    for name, value in values.items():
        bound = limits.get(name)
        if bound is None or isinstance(value, bool) or not isinstance(value, int | float | str):
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            continue  # config_from_mapping says what is wrong with it
        low, high = bound
        if not low <= number <= high:
            raise BadConfig(f"config field {name!r} must be from {low} to {high}, got {number}")
