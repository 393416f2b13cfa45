"""Take Away told to its players: the words of its one named card, and its colours (see
services/engines/core/guide.py). Its Presentation carries it, as each game's does."""

from services.engines.core.guide import Colours, Face, Guide

GUIDE = Guide(
    game="take_away",
    title="Take Away",
    players="2 players",
    goal="Take the pile's last card.",
    setup=("The cards are shuffled into one face-down pile; both hands start empty.",),
    turn=(
        "Take 1 to 3 cards from the pile into your hand,",
        "or, holding a Skip card, play it: the turn passes.",
    ),
    faces=(Face("skip", "Skip", "Skip card", "plain", "Play it instead of taking: the turn passes."),),
    scheme={
        "plain": Colours(fill="#ffffff", edge="#888888", ink="#1d1a24", band="#555555"),
        "back": Colours(fill="#333333", edge="#111111", ink="#eeeeee", band="#555555"),
    },
    back_mark="TA",
)
