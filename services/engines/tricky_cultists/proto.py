"""Tricky Cultists' protobuf messages for the gRPC adapter (protos/cultists/v1/tricky_cultists.proto)."""

from __future__ import annotations

from cultists.v1 import tricky_cultists_pb2 as pb

from ..core.messages import EventFields as F
from ..core.messages import GameMessages

# Each event kind's payload (TrickyCultistsEventPayload): the fields it always carries,
# then those it carries when they apply. A test plays random games and holds every event to it.
EVENTS = {
    "draft": F(),
    "bonus": F(("suit",)),
    "reveal": F(("agenda",)),
    "trick": F(("card", "suit", "trigger")),
    "ability": F(("ability",), ("suit", "target")),
    "steal": F(("card", "target")),
    "score": F((), ("round",)),
    "over": F(),
}

MESSAGES = GameMessages(
    config=pb.TrickyCultistsConfig,
    view=pb.TrickyCultistsView,
    action=pb.TrickyCultistsActionDetail,
    event=pb.TrickyCultistsEventPayload,
    events=EVENTS,
)
