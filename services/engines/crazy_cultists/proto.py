"""Crazy Cultists' protobuf messages for the gRPC adapter (protos/cultists/v1/crazy_cultists.proto)."""

from cultists.v1 import crazy_cultists_pb2 as pb

from services.engines.core.messages import GameMessages

from .cards import KIND_OF_NAME, TITLES


def card_name(name: str) -> str:
    """A card's printed title ("Counter-Spell") from the machine name details use."""
    kind = KIND_OF_NAME.get(name)
    return TITLES[kind] if kind is not None else name


MESSAGES = GameMessages(
    config=pb.CrazyCultistsConfig,
    view=pb.CrazyCultistsView,
    action=pb.CrazyCultistsActionDetail,
    card_name=card_name,
)
