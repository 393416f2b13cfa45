"""Trash Cult: 2-4 cult leaders race to fill their Shrine with the food their cult worships."""

from ..core.game import GameSpec
from .bots import HeuristicBot, evaluate
from .cards import CULTS
from .config import TrashCultConfig
from .presentation import PRESENTATION
from .rules import TrashCultState

GAME = GameSpec(
    name="trash_cult",
    title="Trash Cult",
    min_players=2,
    max_players=4,
    default_players=4,
    config_class=TrashCultConfig,
    state_class=TrashCultState,
    config_choices={"cults": CULTS},  # one per seat, or none for the pick phase (TC-2)
    bots={"heuristic": HeuristicBot},
    evaluate=evaluate,
    summary="Tableau race: recruit animals, stash food, Snackrifice for perks and survive the chaos.",
    presentation=PRESENTATION,
)
