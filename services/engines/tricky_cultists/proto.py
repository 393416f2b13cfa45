"""Tricky Cultists' protobuf messages for the gRPC adapter (protos/cultists/v1/tricky_cultists.proto)."""

from __future__ import annotations

from cultists.v1 import tricky_cultists_pb2 as pb

from ..core.messages import GameMessages

MESSAGES = GameMessages(
    config=pb.TrickyCultistsConfig,
    view=pb.TrickyCultistsView,
    action=pb.TrickyCultistsActionDetail,
)
