"""Bots, named and configured by one string everywhere a bot is chosen.

`random`, `heuristic`, `ismcts:iterations=200`, `ismcts:ms=50,rollout=heuristic`: the
part before the colon names the bot, the rest are keyword parameters. `random` and any
generic bots live here; a game adds its own (e.g. `heuristic`) through `GameSpec.bots`.
A bot only ever picks from the legal list it is given (architecture decision 4) and owns
its own seeded generator, so bot games replay exactly without touching the game's RNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol

from .config import coerce_value
from .errors import BadConfig
from .game import GameSpec, State


class Bot(Protocol):
    name: str

    def choose(self, state: State, seat: int, legal: list[int]) -> int: ...


class RandomBot:
    """Uniform over legal actions."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: State, seat: int, legal: list[int]) -> int:
        return legal[int(self.rng.random() * len(legal))]


def parse_bot_spec(text: str) -> tuple[str, dict[str, str]]:
    """`"ismcts:iterations=200,rollout=heuristic"` -> ("ismcts", {...})."""
    name, _, rest = text.strip().partition(":")
    params: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, sep, value = item.partition("=")
        if not sep:
            raise BadConfig(f"bot parameter {item!r} in {text!r} wants key=value")
        params[key.strip()] = value.strip()
    if not name:
        raise BadConfig("empty bot name")
    return name, params


# Generic bots that work for every game through the protocol; filled in by modules
# that define them (e.g. the IS-MCTS bot) so this module stays free of their imports.
GENERIC_BOTS: dict[str, Callable[..., Bot]] = {}


def bot_names(spec: GameSpec) -> list[str]:
    return ["random", *spec.bots, *GENERIC_BOTS]


def make_bot(spec: GameSpec, text: str, seed: int = 0) -> Bot:
    """Build the bot named by `text` for game `spec`; BadConfig names the known bots."""
    name, params = parse_bot_spec(text)
    if name == "random":
        if params:
            raise BadConfig(f"bot 'random' takes no parameters, got {sorted(params)}")
        return RandomBot(seed)
    factory = spec.bots.get(name) or GENERIC_BOTS.get(name)
    if factory is None:
        raise BadConfig(f"unknown bot {name!r} for {spec.name}; known: {', '.join(bot_names(spec))}")
    hints: dict[str, Any] = getattr(factory, "PARAMS", {})
    unknown = sorted(set(params) - set(hints))
    if unknown:
        known = ", ".join(sorted(hints)) or "none"
        raise BadConfig(f"bot {name!r} has no parameter(s) {', '.join(unknown)}; known: {known}")
    kwargs = {k: coerce_value(k, hints[k], v) for k, v in params.items()}
    return factory(spec=spec, seed=seed, **kwargs)


def _register_generic_bots() -> None:
    from .ismcts import ISMCTSBot
    from .policy import PolicyBot

    GENERIC_BOTS["ismcts"] = ISMCTSBot
    GENERIC_BOTS["policy"] = PolicyBot


_register_generic_bots()
