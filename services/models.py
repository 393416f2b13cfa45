"""What every pydantic model of the platform shares: how a refusal reads, and unions that read.

The gateway's request bodies (`services/gateway/schemas.py`) and the sweep and tune specs
(`services/balance/sweeps/spec.py`, `services/balance/tune/spec.py`, read from files by the CLI and from POST
bodies by the gateway) are all pydantic models; a refusal of any of them is worded here, once,
naming the field at fault. This module imports neither Flask nor the gateway, so workers and
the CLI use it without loading the web app.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Union

from pydantic import BaseModel, Discriminator, Tag, ValidationError

# The longest bot name with its parameters that any API or spec accepts (the lobby's bounds,
# the sweep and tune specs): one number, so a bot a spec may name is one the lobby takes too.
MAX_BOT_SPEC = 200

# The tags `one_of` gives the members of a union. pydantic puts the tag of the member it tried
# into an error's location; `field_path` leaves it out, so the path is the document's own
# ('lineups.0.1', not 'lineups.0.<seats>.1'). Field names are identifiers, so never look like one.
_TAGS: set[str] = set()


def field_path(loc: tuple[int | str, ...]) -> str:
    """An error's location as the field's dotted path: 'seats.1.kind', 'objectives.0.target'."""
    return ".".join(str(part) for part in loc if part not in _TAGS)


def describe(exc: ValidationError) -> str:
    """The first problem, in words naming the field (one at a time, like a person reads)."""
    first = exc.errors(include_url=False)[0]
    kind, loc, msg = first["type"], first["loc"], first["msg"]
    path = field_path(loc)
    if not path:
        if kind == "json_invalid":
            return f"the body is not valid JSON ({msg.removeprefix('Invalid JSON: ')})"
        if kind in ("model_type", "dict_type"):
            return "the body must be a JSON object"
        return f"{msg[:1].lower()}{msg[1:]}"
    if kind == "missing":
        return f"'{path}' is required"
    if kind == "extra_forbidden":
        return f"'{path}' is not a field here (a typo?)"
    if kind == "string_pattern_mismatch" and len(str(first.get("ctx", {}).get("pattern", ""))) > 80:
        return f"'{path}': holds a character the field's pattern (in the API document) leaves out"
    return f"'{path}': {msg[:1].lower()}{msg[1:]}"


def first_field(exc: ValidationError) -> str:
    """The dotted path of the field the first problem is about ('' for the whole body)."""
    return field_path(exc.errors(include_url=False)[0]["loc"])


def one_of(message: str, **members: tuple[Any, tuple[type, ...]]) -> Any:
    """A union chosen by the input's JSON kind: `name=(type, python types it takes)`.

    A plain union reports every member's failure, each under the member's type name
    ('players.list[int].0'); this one tries only the member the input's kind picks, so an
    error names one problem at the field's own path, and an input of no listed kind gets
    `message` ('lineups.0: a line-up is a bot name, ...'). The document shows a `oneOf`."""

    # A model member is also picked by its own instances (dumping a validated spec asks too).
    accepts = {
        name: (*kinds, member) if isinstance(member, type) and issubclass(member, BaseModel) else kinds
        for name, (member, kinds) in members.items()
    }

    def pick(value: Any) -> str | None:
        for name, kinds in accepts.items():
            if isinstance(value, kinds):
                return f"<{name}>"
        return None

    tagged = []
    for name, (member, _kinds) in members.items():
        _TAGS.add(f"<{name}>")
        tagged.append(Annotated[member, Tag(f"<{name}>")])
    chooser: Callable[[Any], str | None] = pick
    return Annotated[
        Union[tuple(tagged)],  # noqa: UP007 (built from a list, so no `|`)
        Discriminator(chooser, custom_error_type="kind", custom_error_message=message),
    ]
