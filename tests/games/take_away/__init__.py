"""Take Away: a test-only fourth game, added through the registry's extension points alone.

Two players share a face-down pile of cards. On a turn a player takes 1 to `max_take`
cards from it into their hand, or, holding a Skip card, may play it to pass; whoever takes
the pile's last card wins. The seed decides the pile's order (where the Skips lie), so a
seat's hand is hidden and `resample_hidden` has something to do.

Nothing under services/ names it: tests register it (`register_game`, or
CULTISTS_EXTRA_GAMES for the processes they start) and then play it through the engine's
gRPC server, the gateway's table API and a local sweep (tests/core/test_fourth_game.py).
"""

from services.engines.core.game import GameSpec

from .config import TakeAwayConfig
from .presentation import PRESENTATION
from .rules import TakeAwayState

GAME = GameSpec(
    name="take_away",
    title="Take Away",
    min_players=2,
    max_players=2,
    default_players=2,
    config_class=TakeAwayConfig,
    state_class=TakeAwayState,
    summary="Take one to three cards a turn; whoever takes the last card wins.",
    presentation=PRESENTATION,
)
