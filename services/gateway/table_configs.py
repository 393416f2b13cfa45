"""A table's `config`, per game, as the engine takes it: one model per game, made from the
engine's own spec, that both checks a request and writes the OpenAPI document's schema.

The fields are the game's config dataclass's; each whole number is bounded by the
engine's published `config_limits` (the bounds its rules take for a field on its own), a
field that takes names (`config_choices`) takes only those, and types are strict: the
engine's own parsing reads `"5"` as 5 and `"yes"` as true, which a JSON client has no
reason to send and the document does not offer. A list of names holds each name once
where the engine refuses a repeat, and a list the engine wants as long as the table
(Trash Cult's `cults`: one per seat, or none) is bounded per table size in `NewTable`'s
alternatives (`size_rules`). All of it is asked of the engine's spec when the module
loads, so a new field, bound or name reaches the document with no edit here.

What stays the engine's alone is a rule over several fields (a hand that fits its deck,
a threshold above its candles); the engine refuses those with 400 `invalid_argument`,
docs/gateway.md lists them.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from services.engines.core.config import config_limits, field_types
from services.engines.core.errors import BadConfig
from services.engines.core.game import GameSpec
from services.engines.registry import available_games, load_game
from services.models import describe, first_field
from services.platform.errors import PlatformError

from .schemas import openapi_components


def seat_bounds() -> tuple[int, int]:
    """Fewest and most seats any installed game takes (some config's): the document's
    bounds of a table's size (a new table's, a replay's) are then the API's, and a schema
    fuzzer's sizes are ones a game might take."""
    specs = [load_game(g) for g in available_games()]
    return min(s.min_players for s in specs), max(s.max_players for s in specs)


class _Config(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


def _refuses(spec: GameSpec, values: dict[str, Any], players: int | None = None) -> bool:
    """True when the engine refuses `values`: its config check alone, or with `players`
    also a table of that size."""
    try:
        config = spec.make_config(values)
        if players is not None:
            spec.new_state(config, players)
    except (BadConfig, ValueError, TypeError):
        return True
    return False


def _field(spec: GameSpec, name: str, kind: Any, default: Any) -> tuple[Any, Any]:
    """One config field as pydantic declares it: its type, bounds and names."""
    limits = config_limits(spec.config_class)
    choices = spec.config_choices.get(name)
    if kind is bool:
        return bool, Field(default)
    if kind is int:
        low, high = limits.get(name, (None, None))
        return int, Field(default, ge=low, le=high)
    if kind is str:
        return (Literal[choices] if choices else str), Field(default)
    if typing.get_origin(kind) is tuple and choices:
        # A name said twice, where the engine's own check refuses it, is refused by the
        # schema too (uniqueItems); the engine itself refuses it in a request.
        repeat = _refuses(spec, {name: list(choices)}) is False and _refuses(
            spec, {name: [*choices, choices[0]]}
        )
        extra: dict[str, Any] = {"uniqueItems": True} if repeat else {}
        return (
            list[Literal[choices]],  # type: ignore[valid-type]
            Field(list(default), max_length=len(choices), json_schema_extra=extra),
        )
    raise TypeError(f"{spec.name}'s config field {name} is of a type the gateway does not document")


def config_name(game: str) -> str:
    """The document's name of a game's table config: `TrashCultTableConfig`."""
    return "".join(part.title() for part in game.split("_")) + "TableConfig"


@functools.cache
def config_model(game: str) -> type[BaseModel]:
    """The game's config as a strict model, every field optional (its default)."""
    spec = load_game(game)
    hints, _ = field_types(spec.config_class)
    fields = {}
    for f in dataclasses.fields(spec.config_class):
        kind, field = _field(spec, f.name, hints[f.name], f.default)
        fields[f.name] = (kind | None, field)  # null: the default, as a form's emptied field
    return create_model(config_name(game), __base__=_Config, **fields)  # type: ignore[call-overload]


def config_schema(game: str) -> dict[str, Any]:
    """The game's config model as an OpenAPI 3.0 component."""
    components = openapi_components(config_model(game))
    schema = components.pop(config_name(game))
    assert not components, f"{game}'s config model uses models of its own: {sorted(components)}"
    schema["description"] = (
        f"config overrides of a {game} table: the engine's fields, bounds (config_limits) and "
        "names (config_choices); a rule over several fields is the engine's (400 invalid_argument)"
    )
    return schema


def size_rules(game: str, players: int) -> dict[str, Any]:
    """What a table of `players` seats asks of its config beyond the model: the lengths
    a list of names may have, where the engine ties them to the table's size (a list
    per seat, or none). Asked of the engine: each length it takes at this size."""
    spec = load_game(game)
    sizes = range(spec.min_players, spec.max_players + 1)
    out: dict[str, Any] = {}
    for name, choices in spec.config_choices.items():
        if typing.get_origin(field_types(spec.config_class)[0][name]) is not tuple:
            continue
        taken = {
            n: [k for k in range(len(choices) + 1) if not _refuses(spec, {name: list(choices[:k])}, n)]
            for n in sizes
        }
        if len({tuple(t) for t in taken.values()}) > 1:  # the size decides
            out[name] = {"anyOf": [{"minItems": k, "maxItems": k} for k in taken[players]]}
    return out


def check_table_config(game: str, config: dict[str, Any]) -> dict[str, Any]:
    """The overrides a config asks for (a null field is the default: left out), or 400 for
    a config the game's model refuses, naming the field: `config_limit` (with the bounds)
    for a number outside them, else `invalid_config`."""
    try:
        config_model(game).model_validate(config)
        return {name: value for name, value in config.items() if value is not None}
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = first_field(exc)
        path = f"config.{field}" if field else "config"
        if first["type"] in ("less_than_equal", "greater_than_equal") and len(first["loc"]) == 1:
            low, high = config_limits(load_game(game).config_class)[field]
            raise PlatformError(
                400, "config_limit", f"config field {field!r} of {game} must be from {low} to {high}",
                field=path, minimum=low, maximum=high,
            ) from None  # fmt: skip
        message = describe(exc).replace(f"'{field}'", f"'{path}'", 1) if field else describe(exc)
        raise PlatformError(400, "invalid_config", message, field=path) from None
