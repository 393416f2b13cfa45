"""The most one bot decision may cost on this engine, whatever the caller asked for.

The gateway bounds bot parameters before it asks (services/platform/bounds.py), but an
engine is reachable by anything inside the network: it keeps its own ceiling, read from
its environment, so a caller that skips the gateway (or a gateway misconfigured) still
cannot buy a ten-minute search. The ceiling is checked on the bot as built (defaults
included), so `ismcts` with no parameters is priced at its default budget too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import BadConfig

ITERATIONS_ENV = "ENGINE_MAX_BOT_ITERATIONS"
MS_ENV = "ENGINE_MAX_BOT_MS"


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BadConfig(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise BadConfig(f"{name} must be above 0, got {raw!r}")
    return value


@dataclass(frozen=True)
class BotBudget:
    """Ceilings on a bot's search budget. Above the gateway's own (1000 iterations,
    1000 ms), so everything the gateway lets through passes here."""

    iterations: int = 5000
    ms: float = 5000.0

    @classmethod
    def from_env(cls) -> BotBudget:
        return cls(
            iterations=int(_env_number(ITERATIONS_ENV, cls.iterations)),
            ms=_env_number(MS_ENV, cls.ms),
        )

    def check(self, bot: object, text: str) -> None:
        """BadConfig (INVALID_ARGUMENT) naming the ceiling the bot `text` built exceeds.
        An `ms` budget replaces the iteration count (ismcts.py), so only the one in use
        is priced."""
        ms = float(getattr(bot, "ms", 0.0) or 0.0)
        if ms > self.ms:
            raise BadConfig(f"bot {text!r}: ms={ms:g} is above this engine's {MS_ENV}={self.ms:g}")
        iterations = getattr(bot, "iterations", None)
        if ms <= 0 and iterations is not None and iterations > self.iterations:
            raise BadConfig(
                f"bot {text!r}: iterations={iterations} is above this engine's "
                f"{ITERATIONS_ENV}={self.iterations}"
            )
