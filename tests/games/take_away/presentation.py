"""Take Away on the pages: its guide (its card's words), and which of its moves are public."""

from services.engines.core.presentation import Presentation

from .guide import GUIDE

PRESENTATION = Presentation(guide=GUIDE, public_moves=frozenset({"take", "skip"}))
