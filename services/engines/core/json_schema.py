"""JSON Schemas of a game's messages, read from their protobuf descriptors (one source).

A client sees a game's view and an action's detail as JSON made by `messages.message_to_dict`
(proto field names; every field without presence printed, zero values included; an
`optional` scalar or a message field absent when unset). The schemas here say exactly that,
field for field, from the same descriptors the engines serialise with, so the document a
client generates its types from cannot drift from what it is sent: a field is `required`
unless it has presence, and no other key appears (`additionalProperties: false`, which
also keeps the games' schemas apart in a `oneOf`). Nested messages become components of
their own, named by the message (`TrashCultSeat`); `$ref`s point into `ref_prefix`.
Written in the JSON Schema subset OpenAPI 3.0 reads.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

_INTEGERS = {
    FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32,
    FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32,
}  # fmt: skip
_NUMBERS = {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}
_INT64 = {
    FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64,
    FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64,
}  # fmt: skip


def message_schemas(descriptor: Descriptor, ref_prefix: str = "#/components/schemas/") -> dict[str, Any]:
    """`descriptor`'s schema and those of every message it holds, by message name."""
    out: dict[str, Any] = {}
    _add(descriptor, out, ref_prefix)
    return out


def _add(descriptor: Descriptor, out: dict[str, Any], prefix: str) -> None:
    if descriptor.name in out:
        return
    out[descriptor.name] = {}  # a placeholder: a message that holds itself stops here
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in descriptor.fields:
        properties[field.name] = _field(field, out, prefix)
        if not field.has_presence or field.is_repeated:
            required.append(field.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    out[descriptor.name] = schema


def _field(field: FieldDescriptor, out: dict[str, Any], prefix: str) -> dict[str, Any]:
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        return {"type": "object", "additionalProperties": _value(entry.fields_by_name["value"], out, prefix)}
    one = _value(field, out, prefix)
    return {"type": "array", "items": one} if field.is_repeated else one


def _value(field: FieldDescriptor, out: dict[str, Any], prefix: str) -> dict[str, Any]:
    if field.message_type is not None:
        if field.message_type.full_name.startswith("google.protobuf."):
            return {}  # a well-known type keeps its own JSON form: any value
        _add(field.message_type, out, prefix)
        return {"$ref": prefix + field.message_type.name}
    kind = field.type
    if kind in _INTEGERS:
        return {"type": "integer", "format": "int32"}
    if kind in _INT64:
        return {"type": "string", "format": "int64"}  # the protobuf JSON form of 64-bit integers
    if kind in _NUMBERS:
        return {"type": "number"}
    if kind == FieldDescriptor.TYPE_BOOL:
        return {"type": "boolean"}
    if kind == FieldDescriptor.TYPE_ENUM:
        assert field.enum_type is not None  # (set on every enum field)
        return {"type": "string", "enum": [v.name for v in field.enum_type.values]}
    if kind == FieldDescriptor.TYPE_BYTES:
        return {"type": "string", "format": "byte"}
    return {"type": "string"}
