"""Take Away on the pages: its two cards' words, and which of its moves are public."""

from services.engines.core.presentation import Presentation

PRESENTATION = Presentation(
    card_text={"skip": "Play it instead of taking: the turn passes."},
    public_moves=frozenset({"take", "skip"}),
)
