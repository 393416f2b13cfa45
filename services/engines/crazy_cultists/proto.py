"""Crazy Cultists' protobuf messages for the gRPC adapter (protos/cultists/v1/crazy_cultists.proto)."""

from cultists.v1 import crazy_cultists_pb2 as pb

from services.engines.core.messages import EventFields as F
from services.engines.core.messages import GameMessages

from .cards import KIND_OF_NAME, TITLES


def card_name(name: str) -> str:
    """A card's printed title ("Counter-Spell") from the machine name details use."""
    kind = KIND_OF_NAME.get(name)
    return TITLES[kind] if kind is not None else name


# Each event kind's payload (CrazyCultistsEventPayload): the fields it always carries,
# then those it carries when they apply. A test plays random games and holds every event to it.
EVENTS = {
    "pass": F(),
    "play": F(("card",), ("target",)),
    "discard": F(("card",)),
    "counter": F(("card", "count")),
    "cancel": F(("card",)),
    "take": F(("count",), ("card", "target", "zone")),
    "ouija": F(("choice",)),
    "dark": F(),
    "spire": F(),
    "overshoot": F(("count",)),
    "candle": F(("count",)),
    "win": F(),
    "capped": F(),
    "skip": F(),
}


MESSAGES = GameMessages(
    config=pb.CrazyCultistsConfig,
    view=pb.CrazyCultistsView,
    action=pb.CrazyCultistsActionDetail,
    card_name=card_name,
    event=pb.CrazyCultistsEventPayload,
    events=EVENTS,
)
