"""The bridge between a game's plain-Python dicts and its protobuf messages.

Each game's `proto.py` names three messages from its own .proto (config, view, action
detail). Views and details are built as dicts whose keys are exactly the message's field
names, so one conversion (protobuf's json_format) serves every game and a mismatch fails
loudly in the contract tests rather than silently dropping a field.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2, json_format
from google.protobuf.message import Message

from .errors import BadConfig


@dataclass(frozen=True)
class GameMessages:
    config: type[Message]
    view: type[Message]
    action: type[Message]

    def config_to_any(self, values: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(json_format.ParseDict(values, self.config()))
        return packed

    def config_from_any(self, packed: any_pb2.Any) -> dict[str, Any]:
        """Only the fields the caller set: unset ones keep the game's defaults."""
        if not packed.type_url:
            return {}
        msg = self.config()
        if not packed.Is(msg.DESCRIPTOR):
            raise BadConfig(
                f"config is a {packed.TypeName()!r}, this game wants {msg.DESCRIPTOR.full_name!r}"
            )
        packed.Unpack(msg)
        return json_format.MessageToDict(msg, preserving_proto_field_name=True)

    def view_to_any(self, view: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(json_format.ParseDict(view, self.view()))
        return packed

    def action_to_any(self, detail: dict[str, Any]) -> any_pb2.Any:
        packed = any_pb2.Any()
        packed.Pack(json_format.ParseDict(detail, self.action()))
        return packed


def load_messages(game: str) -> GameMessages:
    """The GameMessages declared in `services/engines/<game>/proto.py`."""
    return importlib.import_module(f"services.engines.{game}.proto").MESSAGES


def message_to_dict(msg: Message) -> dict[str, Any]:
    """JSON-ready dict with proto field names and zero values kept (what clients see)."""
    return json_format.MessageToDict(
        msg, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
