"""Trash Cult's protobuf messages, for the gRPC adapter (protos/cultists/v1/trash_cult.proto)."""

from cultists.v1 import trash_cult_pb2 as pb

from ..core.messages import EventFields as F
from ..core.messages import GameMessages

# Each event kind's payload (TrashCultEventPayload): the fields it always carries, then
# those it carries when they apply. A test plays random games and holds every event to it.
EVENTS = {
    "turn": F(("turn",)),
    "draw": F(("count",)),
    "reshuffle": F(),
    "pick": F(("cult",)),
    "add": F(("card", "zone")),
    "convert": F(("card",)),
    "plushie": F(("card", "cult")),
    "pigeon": F(("card", "target")),
    "poison": F(("card", "target")),
    "discard": F(("card",)),
    "pass": F(),
    "snackrifice": F(("cult",)),
    "protect": F(("card", "effect")),
    "poisoned": F(),
    "perk": F(("cult",), ("card", "target")),
    "chaos": F(("card",)),
    "hide": F(("card",)),
    "resolve": F(("card",)),
    "swap": F(),
    "trash": F(("card",), ("zone",)),
    "keep": F(),
    "free": F(("card",)),
    "win": F(("cult",)),
    "end": F(),
}

# Its details name cards by their printed names ("Pigeon Thief") and a targeted seat `seat`.
MESSAGES = GameMessages(
    config=pb.TrashCultConfig,
    view=pb.TrashCultView,
    action=pb.TrashCultActionDetail,
    target_field="seat",
    event=pb.TrashCultEventPayload,
    events=EVENTS,
)
