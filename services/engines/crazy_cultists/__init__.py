"""Crazy Cultists: race to light your candles with favor stacks while hexing everyone else."""

from services.engines.core.game import GameSpec

from .bots import HeuristicBot, evaluate
from .config import MIN_PLAYERS, VARIANTS, CrazyCultistsConfig
from .presentation import PRESENTATION
from .rules import CrazyCultistsState

GAME = GameSpec(
    name="crazy_cultists",
    title="Crazy Cultists",
    min_players=MIN_PLAYERS,  # CC-2: 3-6, and 2 as a variant for sweeps
    max_players=6,
    default_players=4,
    config_class=CrazyCultistsConfig,
    state_class=CrazyCultistsState,
    variants=("variant", "dark_powers", "optional_setup"),  # CC-9, CC-10, CC-11
    config_choices={"variant": VARIANTS},
    bots={"heuristic": HeuristicBot},
    evaluate=evaluate,
    least_players=lambda config: MIN_PLAYERS if config.two_players else 3,  # CC-2
    summary=(
        "Stack favor cards to earn candles, hex rivals with Hijinx, counter their spells; "
        "first to light every candle summons The Dark One."
    ),
    presentation=PRESENTATION,
)
