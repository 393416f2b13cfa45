"""Trash Cult's protobuf messages, for the gRPC adapter (protos/cultists/v1/trash_cult.proto)."""

from cultists.v1 import trash_cult_pb2 as pb

from ..core.messages import GameMessages

# Its details name cards by their printed names ("Pigeon Thief") and a targeted seat `seat`.
MESSAGES = GameMessages(
    config=pb.TrashCultConfig,
    view=pb.TrashCultView,
    action=pb.TrashCultActionDetail,
    target_field="seat",
)
