"""Tricky Cultists: four cultists in two partnerships play tricks for secret agendas."""

from __future__ import annotations

from ..core.game import GameSpec
from .bots import HeuristicBot, evaluate
from .cards import SUIT_NAMES
from .config import PLAYERS, TrickyCultistsConfig
from .presentation import PRESENTATION
from .rules import TrickyCultistsState


def partnerships(players: int) -> list[list[int]]:
    """TK-2: partners sit opposite, seats 0+2 against 1+3 (a seat's team is seat % 2)."""
    return [[s for s in range(players) if s % 2 == team] for team in (0, 1)]


GAME = GameSpec(
    name="tricky_cultists",
    title="Tricky Cultists",
    min_players=PLAYERS,
    max_players=PLAYERS,
    default_players=PLAYERS,
    config_class=TrickyCultistsConfig,
    state_class=TrickyCultistsState,
    config_choices={"suits": SUIT_NAMES},  # TK-7
    bots={"heuristic": HeuristicBot},
    evaluate=evaluate,
    teams=partnerships,
    summary=(
        "Two partnerships play four rounds of tricks; each cultist drafts a secret agenda, "
        "and the second-highest card of the led suit triggers that suit's ability."
    ),
    presentation=PRESENTATION,
)
