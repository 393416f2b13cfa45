"""Trash Cult's protobuf messages, for the gRPC adapter (protos/cultists/v1/trash_cult.proto)."""

from cultists.v1 import trash_cult_pb2 as pb

from ..core.messages import GameMessages

MESSAGES = GameMessages(config=pb.TrashCultConfig, view=pb.TrashCultView, action=pb.TrashCultActionDetail)
