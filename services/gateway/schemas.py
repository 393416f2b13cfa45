"""Request and response shapes declared once, as pydantic models (issue 15, item 5).

Each API module declares its request bodies (and its main responses) as subclasses of
`Body` beside its routes; `parse_body` validates a request against one, and
`openapi_components` turns the same classes into the OpenAPI document's schemas. So the
checks a request meets, the 400 it gets and what the document promises come from one
declaration and cannot drift apart, as they did when every module checked fields by hand
beside a hand-written schema literal.

Rules every body follows:

- strict types: `"1"`, `1.0` and `true` are not integers (a client bug, said at once);
- `null` is the default for every optional field (declared `X | None = None`, the view
  fills the default), never for a required one;
- unknown fields are ignored (older and newer clients keep working), except in sweep and
  tune specs, whose models live with their parsers (`services/balance/sweeps/spec.py`,
  `services/balance/tune/spec.py`) and refuse a key they do not know (a typo in a spec file);
- a refusal is the gateway's one error shape: 400 `malformed`, the message naming the
  field (`'seats.1.kind': input should be 'human' or 'bot'`, worded by `services.models`)
  and `field` its dotted path.

Validation is pydantic-core's, from the raw bytes (no separate JSON parse): about 2 us for
a move's body, less than the hand checks it replaced.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from flask import request
from pydantic import BaseModel, ConfigDict, Field, ValidationError, WithJsonSchema

from services.models import describe, first_field
from services.platform.errors import PlatformError

B = TypeVar("B", bound=BaseModel)

# Marks a field as a component the app adds itself (pydantic follows every $ref it writes,
# so it cannot write one to a schema it does not know); the OpenAPI conversion swaps it.
_COMPONENT = "x-component"

# Where components live in the OpenAPI document; models refer to each other through it.
REF_TEMPLATE = "#/components/schemas/{model}"


class Body(BaseModel):
    """Base of every request and response model of the API."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


def _refusal(exc: ValidationError) -> PlatformError:
    """400 `malformed` in words naming the field, and the field's path for programs."""
    field = first_field(exc)
    return PlatformError(400, "malformed", describe(exc), **({"field": field} if field else {}))


def parse_body(model: type[B], optional: bool = False) -> B:
    """The request's JSON body as `model`, or 400 `malformed` saying what is wrong with it.
    With `optional`, an empty body is the model's defaults (endpoints whose body may be
    left out entirely)."""
    data = request.get_data(cache=True)
    if optional and not data:
        return model()
    if not request.is_json:
        raise PlatformError(400, "malformed", "send the body as application/json")
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise _refusal(exc) from None


def validate(model: type[B], value: Any) -> B:
    """`value` (already parsed, e.g. from a query string) as `model`, or 400 `malformed`."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise _refusal(exc) from None


# -- OpenAPI -------------------------------------------------------------------------------------
def _openapi_30(node: Any) -> Any:
    """JSON Schema (what pydantic writes) as OpenAPI 3.0 reads it: `X | None` becomes
    `nullable`, `const` an enum of one, `exclusiveMinimum: 0` a minimum with the flag set,
    and titles (class names) are dropped."""
    if isinstance(node, list):
        return [_openapi_30(n) for n in node]
    if not isinstance(node, dict):
        return node
    if _COMPONENT in node:  # a component pydantic does not make (see `component`)
        return {"$ref": REF_TEMPLATE.format(model=node[_COMPONENT])}
    out = {k: _openapi_30(v) for k, v in node.items() if k != "title"}
    options = out.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        del out["anyOf"]
        if len(rest) == 1 and "$ref" not in rest[0]:
            out.update(rest[0])
        else:  # a $ref takes no siblings in OpenAPI 3.0
            out["allOf" if len(rest) == 1 else "anyOf"] = rest
        out["nullable"] = True
    if "const" in out:
        out["enum"] = [out.pop("const")]
    for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if isinstance(out.get(flag), int | float) and not isinstance(out[flag], bool):
            out[bound] = out.pop(flag)  # JSON Schema's number is 3.0's bound plus a flag
            out[flag] = True
    return out


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """A query-string model as OpenAPI parameters (`in: query`), one per field."""
    schema = model.model_json_schema(ref_template=REF_TEMPLATE)
    required = set(schema.get("required", ()))
    out = []
    for name, prop in schema["properties"].items():
        entry: dict[str, Any] = {"name": name, "in": "query", "required": name in required}
        prop = _openapi_30(prop)
        if "description" in prop:
            entry["description"] = prop.pop("description")
        if prop.pop("nullable", False):  # a query has no null: an optional one is left out
            prop.pop("default", None)
            if list(prop) == ["allOf"]:
                prop = prop["allOf"][0]
        entry["schema"] = prop
        out.append(entry)
    return out


def component(name: str) -> WithJsonSchema:
    """Annotates a field as the document's component `name` (one pydantic does not make,
    such as GameName, whose names are known only when the app is built)."""
    return WithJsonSchema({_COMPONENT: name})


def openapi_components(*models: type[BaseModel]) -> dict[str, Any]:
    """The models (and every model they use) as OpenAPI components, by class name."""
    out: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template=REF_TEMPLATE)
        for name, sub in schema.pop("$defs", {}).items():
            out[name] = _openapi_30(sub)
        out[model.__name__] = _openapi_30(schema)
    return out


# A game's name: any short string here (an unknown one is 404, from the engine clients);
# the document lists the names this gateway serves (openapi.document's GameName).
GameName = Annotated[str, Field(min_length=1, max_length=64), component("GameName")]
# The name shown at a table: a free label, not who plays.
DisplayName = Annotated[str, Field(min_length=1, max_length=64)]


# -- shapes more than one module answers with ------------------------------------------------
class ErrorDetail(Body):
    code: str = Field(description="what went wrong, for programs: malformed, stale_version, ...")
    message: str = Field(description="what went wrong, for people; names the field at fault")
    version: int | None = Field(None, description="the table's version (409 only)")
    retry_after: int | None = Field(None, description="seconds to wait (429, 503 busy)")
    field: str | None = Field(
        None, description="the field at fault, as a dotted path (400): 'seats.1.kind', 'search.threshold'"
    )


class Error(Body):
    """Every failure, whatever the endpoint: one shape to parse."""

    error: ErrorDetail


class SeatScore(Body):
    """One seat's final score as the game's rules keep it, and what made it."""

    seat: int
    total: float = Field(description="candles, Shrine food or points, by game")
    parts: dict[str, float] = Field(description="the named parts, e.g. agenda, tricks, bonus, suspicion")
