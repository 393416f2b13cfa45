"""Crazy Cultists' protobuf messages for the gRPC adapter (protos/cultists/v1/crazy_cultists.proto)."""

from cultists.v1 import crazy_cultists_pb2 as pb

from services.engines.core.messages import GameMessages

MESSAGES = GameMessages(
    config=pb.CrazyCultistsConfig,
    view=pb.CrazyCultistsView,
    action=pb.CrazyCultistsActionDetail,
)
