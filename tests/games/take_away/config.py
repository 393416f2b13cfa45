"""Take Away's config: the pile's size, its Skip cards and the most cards a turn takes."""

from __future__ import annotations

from dataclasses import dataclass

from services.engines.core.errors import BadConfig


@dataclass(frozen=True)
class TakeAwayConfig:
    pile: int = 15
    max_take: int = 3
    skips: int = 2  # Skip cards among the pile's

    def validate(self) -> None:
        if not 1 <= self.max_take <= 5:
            raise BadConfig(f"max_take must be 1-5, got {self.max_take}")
        if not 0 <= self.skips < self.pile <= 40:
            raise BadConfig(f"the pile must hold 1-40 cards, more than its {self.skips} Skips")
