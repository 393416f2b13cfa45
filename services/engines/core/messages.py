"""The bridge between a game's plain-Python dicts and its protobuf messages.

Each game's `proto.py` names three messages from its own .proto (config, view, action
detail). Views and details are built as dicts whose keys are exactly the message's field
names, so one conversion serves every game and a mismatch fails loudly in the contract
tests rather than silently dropping a field.

The conversion has the semantics of protobuf's `json_format` (`ParseDict` one way,
`MessageToDict` with proto field names and zero values kept the other), but `json_format`
is pure Python and walks every field through half a dozen calls: it was most of the CPU
of a `View` call and of the gateway's JSON. So views and action details take a fast path
compiled once per message type:

- dict -> message: the message's own constructor, which builds nested messages, lists and
  maps in C and refuses unknown field names and wrong integers as ParseDict does, after a
  check of the few things the constructor takes more loosely (see `_checker`). Whatever
  the check does not vouch for, or the constructor refuses, goes to `ParseDict`, which
  then converts it or raises exactly as before; so the fast path never accepts anything
  `ParseDict` would refuse, nor builds a different message.
- message -> dict: `ListFields` plus the message type's zero values, in the same key order
  `MessageToDict` produces. Types whose JSON form is not the plain value (64-bit ints,
  floats, bytes, enums, well-known types) keep using `json_format` for that message.

Configs keep `json_format` both ways: they come from users over HTTP, are converted rarely,
and their error messages are what a client reads.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from google.protobuf import any_pb2, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from .errors import BadConfig

_INT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
    }
)
# Field types whose Python value is also their JSON value (the fast paths handle these).
_PLAIN_TYPES = {FieldDescriptor.TYPE_STRING: str, FieldDescriptor.TYPE_BOOL: bool} | dict.fromkeys(
    _INT_TYPES, int
)


def _same(name: str) -> str:
    return name


class EventFields(NamedTuple):
    """The payload fields of one event kind: those always set, and those set when they apply."""

    always: tuple[str, ...] = ()
    sometimes: tuple[str, ...] = ()


@dataclass(frozen=True)
class GameMessages:
    config: type[Message]
    view: type[Message]
    action: type[Message]
    # The one vocabulary every game's actions are also given in (`vocabulary`): which
    # ActionDetail field names the seat an action targets, and a card's printed name from
    # the id its detail names it by.
    target_field: str = "target"
    card_name: Callable[[str], str] = _same
    # The game's <Game>EventPayload message and, by event kind, the payload fields that
    # kind always carries and those it may carry (absent otherwise): what the published
    # schemas of each kind say (services/engines/core/json_schema.py, event_schemas).
    event: type[Message] | None = None
    events: Mapping[str, EventFields] = dataclasses.field(default_factory=dict)

    def vocabulary(self, detail: dict[str, Any]) -> dict[str, Any]:
        """An action's detail in the words every game shares: `kind`; `card`, always an
        object `{id, name, ...}` (id a string); `target`, the seat it targets. A field
        that does not apply is absent, never "" or -1."""
        out: dict[str, Any] = {}
        if detail.get("kind"):
            out["kind"] = detail["kind"]
        card = detail.get("card")
        if isinstance(card, dict) and card:
            out["card"] = {**card, "id": str(card.get("id", "")), "name": card.get("name") or ""}
        elif isinstance(card, str) and card:
            out["card"] = {"id": card, "name": self.card_name(card)}
        target = detail.get(self.target_field)
        if isinstance(target, int) and not isinstance(target, bool) and target >= 0:
            out["target"] = target
        return out

    def config_to_any(self, values: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(json_format.ParseDict(values, self.config()))
        return packed

    def config_from_any(self, packed: any_pb2.Any) -> dict[str, Any]:
        """Only the fields the caller set: unset ones keep the game's defaults."""
        if not packed.type_url:
            return {}
        msg = self.config()
        if not packed.Is(cast(Descriptor, msg.DESCRIPTOR)):  # (types-protobuf: Descriptor or upb's)
            raise BadConfig(
                f"config is a {packed.TypeName()!r}, this game wants {msg.DESCRIPTOR.full_name!r}"
            )
        packed.Unpack(msg)
        return json_format.MessageToDict(msg, preserving_proto_field_name=True)

    def view_to_any(self, view: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(dict_to_message(self.view, view))
        return packed

    def action_to_any(self, detail: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(dict_to_message(self.action, detail))
        return packed

    def event_to_any(self, payload: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        if self.event is not None:
            packed.Pack(dict_to_message(self.event, payload))
        return packed

    def event_from_any(self, packed: any_pb2.Any) -> dict[str, Any]:
        """An event's payload as JSON: only the fields it carries ({} for none)."""
        if self.event is None or not packed.type_url:
            return {}
        msg = self.event()
        if not packed.Unpack(msg):
            return {}
        return message_to_dict(msg)


def load_messages(game: str) -> GameMessages:
    """The GameMessages declared in the game's `proto.py` (where the registry says the
    game's package is)."""
    from ..registry import load_messages as of_game  # the registry imports games, which import core

    return of_game(game)


# -- dict -> message -----------------------------------------------------------------------


def dict_to_message(cls: type[Message], values: dict[str, Any]) -> Message:
    """`json_format.ParseDict(values, cls())`, without its cost when `values` is exactly
    the message's shape (see the module docstring)."""
    if _checker(cast(Descriptor, cls.DESCRIPTOR))(values):
        try:
            return cls(**values)
        except (TypeError, ValueError):
            pass  # an unknown field, an int out of range...: ParseDict says what is wrong
    return json_format.ParseDict(values, cls())


# The constructor is as strict as ParseDict about field names and integers (it refuses
# floats, strings and bools there, out-of-range values and unpaired surrogates). It is
# looser about the rest: a bool field takes any int, a string field takes bytes, and a
# repeated field takes any iterable (a str becomes its characters). The checks below cover
# exactly those, so they only visit string, bool, repeated, map and message fields.


def _never(_value: Any) -> bool:
    return False


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_bool(value: Any) -> bool:
    return type(value) is bool


def _is_list(value: Any) -> bool:
    return type(value) is list


def _list_of(kind: type) -> Callable[[Any], bool]:
    kinds = {kind}

    def check(value: Any) -> bool:
        return type(value) is list and set(map(type, value)) <= kinds

    return check


def _scalar_checker(field: FieldDescriptor) -> Callable[[Any], bool] | None:
    """Checks one value of a non-message field; None when the constructor is strict
    enough by itself (ints), `_never` for types left to ParseDict (floats, enums...)."""
    kind = _PLAIN_TYPES.get(field.type)
    if kind is int:
        return None
    if kind is str:
        return _is_str
    if kind is bool:
        return _is_bool
    return _never


def _field_checker(field: FieldDescriptor) -> Callable[[Any], bool] | None:
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        if _PLAIN_TYPES.get(entry.fields_by_name["key"].type) is not str:
            return _never  # JSON map keys are strings; ParseDict converts other key types
        value = entry.fields_by_name["value"]
        value_ok = _message_checker(value) if value.message_type is not None else _scalar_checker(value)
        str_keys = {str}

        def check_map(items: Any) -> bool:
            if type(items) is not dict or not set(map(type, items)) <= str_keys:
                return False
            return value_ok is None or all(map(value_ok, items.values()))

        return check_map
    if entry is not None:
        each = _message_checker(field)
        if not field.is_repeated:
            return each

        def check_messages(items: Any) -> bool:
            return type(items) is list and all(map(each, items))

        return check_messages
    one = _scalar_checker(field)
    if not field.is_repeated:
        return one
    if one is None:
        return _is_list
    if one is _never:
        return _never
    return _list_of(str if one is _is_str else bool)


def _message_checker(field: FieldDescriptor) -> Callable[[Any], bool]:
    assert field.message_type is not None  # (set on every message field)
    if field.message_type.full_name.startswith("google.protobuf."):
        return _never  # well-known types have their own JSON forms
    return _checker(field.message_type)


class _LazyChecker:
    """Stands for the checker of a message type still being built (a type that contains
    itself), and looks it up when first called."""

    __slots__ = ("descriptor",)

    def __init__(self, descriptor: Descriptor) -> None:
        self.descriptor = descriptor

    def __call__(self, value: Any) -> bool:
        return _checker(self.descriptor)(value)


_CHECKERS: dict[str, Callable[[Any], bool]] = {}
_BUILDING: set[str] = set()
_BUILD_LOCK = threading.RLock()


def _checker(descriptor: Descriptor) -> Callable[[Any], bool]:
    """True when the message's constructor, given this dict, builds the message ParseDict
    would (a dict the constructor refuses falls back to ParseDict as well). Built once per
    message type, with the checkers of nested types inlined as direct calls."""
    found = _CHECKERS.get(descriptor.full_name)
    if found is not None:
        return found
    with _BUILD_LOCK:
        found = _CHECKERS.get(descriptor.full_name)
        if found is not None:
            return found
        if descriptor.full_name in _BUILDING:
            return _LazyChecker(descriptor)
        _BUILDING.add(descriptor.full_name)
        try:
            check = _build_checker(descriptor)
        finally:
            _BUILDING.discard(descriptor.full_name)
        _CHECKERS[descriptor.full_name] = check
        return check


def _build_checker(descriptor: Descriptor) -> Callable[[Any], bool]:
    if any(len(oneof.fields) > 1 for oneof in descriptor.oneofs):
        return _never  # ParseDict refuses two members of one oneof; leave that to it
    checks = [(f.name, c) for f in descriptor.fields if (c := _field_checker(f)) is not None]

    def check(values: Any) -> bool:
        if type(values) is not dict:
            return False
        get = values.get
        for name, field_ok in checks:
            value = get(name)
            # None leaves a field unset, in ParseDict and in the constructor alike.
            if value is not None and not field_ok(value):
                return False
        return True

    return check


# -- message -> dict -----------------------------------------------------------------------


def message_to_dict(msg: Message) -> dict[str, Any]:
    """JSON-ready dict with proto field names and zero values kept (what clients see):
    `json_format.MessageToDict(msg, preserving_proto_field_name=True,
    always_print_fields_with_no_presence=True)`, fast for the plain field types."""
    return _converter(cast(Descriptor, msg.DESCRIPTOR))(msg)


def _json_format_to_dict(msg: Message) -> dict[str, Any]:
    return json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def _plain_throughout(descriptor: Descriptor, seen: set[str] | None = None) -> bool:
    """Whether every field, nested ones included, is one whose JSON form is its Python
    value (or a map with string or int keys, a list or a message of such fields)."""
    seen = set() if seen is None else seen
    if descriptor.full_name in seen:
        return True
    seen.add(descriptor.full_name)
    for field in descriptor.fields:
        entry = field.message_type
        if entry is None:
            if field.type not in _PLAIN_TYPES:
                return False
        elif entry.full_name.startswith("google.protobuf."):
            return False  # well-known types have their own JSON forms
        elif entry.GetOptions().map_entry and _PLAIN_TYPES.get(entry.fields_by_name["key"].type) is bool:
            return False  # bool keys print as "true"/"false"
        elif not _plain_throughout(entry, seen):
            return False
    return True


class _LazyConverter:
    """Stands for the converter of a message type still being built (a type that contains
    itself), and looks it up when first called."""

    __slots__ = ("descriptor",)

    def __init__(self, descriptor: Descriptor) -> None:
        self.descriptor = descriptor

    def __call__(self, msg: Message) -> dict[str, Any]:
        return _converter(self.descriptor)(msg)


_CONVERTERS: dict[str, Callable[[Message], dict[str, Any]]] = {}


def _converter(descriptor: Descriptor) -> Callable[[Message], dict[str, Any]]:
    """The message type's converter, built once (see `_checker` for the locking)."""
    found = _CONVERTERS.get(descriptor.full_name)
    if found is not None:
        return found
    with _BUILD_LOCK:
        found = _CONVERTERS.get(descriptor.full_name)
        if found is not None:
            return found
        key = "to_dict:" + descriptor.full_name
        if key in _BUILDING:
            return _LazyConverter(descriptor)
        _BUILDING.add(key)
        try:
            convert = _build_converter(descriptor) if _plain_throughout(descriptor) else _json_format_to_dict
        finally:
            _BUILDING.discard(key)
        _CONVERTERS[descriptor.full_name] = convert
        return convert


def _field_converter(field: FieldDescriptor) -> Callable[[Any], Any] | None:
    """How a field's value becomes JSON; None when it already is JSON (a plain scalar)."""
    entry = field.message_type
    if entry is not None and entry.GetOptions().map_entry:
        value_entry = entry.fields_by_name["value"]
        if value_entry.message_type is None:
            return lambda items: {str(k): v for k, v in items.items()}
        one = _converter(value_entry.message_type)
        return lambda items: {str(k): one(v) for k, v in items.items()}
    if entry is None:
        return list if field.is_repeated else None
    one = _converter(entry)
    if not field.is_repeated:
        return one
    return lambda items: [one(item) for item in items]


def _build_converter(descriptor: Descriptor) -> Callable[[Message], dict[str, Any]]:
    converters: dict[str, Callable[[Any], Any] | None] = {}
    # Zero values of the fields without presence, in declaration order: MessageToDict adds
    # them after the set fields (which ListFields gives in field-number order), so the keys
    # come out in the same order.
    zeros: list[tuple[str, Callable[[], Any]]] = []
    for field in descriptor.fields:
        converters[field.name] = _field_converter(field)
        if field.has_presence:
            continue
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            zeros.append((field.name, dict))
        elif field.is_repeated:
            zeros.append((field.name, list))
        else:
            zeros.append((field.name, functools.partial(_itself, field.default_value)))

    def convert(msg: Message) -> dict[str, Any]:
        out = {}
        for field, value in msg.ListFields():
            to_json = converters[field.name]
            out[field.name] = value if to_json is None else to_json(value)
        for name, zero in zeros:
            if name not in out:
                out[name] = zero()
        return out

    return convert


def _itself(value: Any) -> Any:
    return value
