"""What one request may ask the platform to compute or store (issue 15).

Every entry point that takes a bot name (the lobby's seats, the replay API's line-ups) or
config overrides goes through these checks, so a bot spec with ten million iterations or a
deck of a million cards is refused with a 400 that names the field and its limit, before
any engine is asked. The bounds of config fields are the engine's own (`Describe`'s
`config_limits`); the bounds of bot parameters are the gateway's, because they price a
request's CPU, which is the gateway's concern.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from cultists.v1 import engine_pb2

from services.engines.core.bots import make_bot, parse_bot_spec
from services.engines.core.errors import EngineError
from services.engines.registry import load_game
from services.models import MAX_BOT_SPEC

from .errors import PlatformError

# Largest value of each numeric bot parameter a request may name. `iterations` and `ms`
# price one decision (the engine's SuggestAction and a replay rebuild alike); `depth` the
# length of one rollout (0 = to the end, allowed: the game's turn cap bounds it).
BOT_PARAM_MAX: dict[str, float] = {
    "iterations": 1000,
    "ms": 1000.0,
    "depth": 50,
    "c": 10.0,
    "prior": 10.0,
}
# Rollout bots a search may use: cheap ones only (a search rolling out with a search
# multiplies the budgets).
ROLLOUTS = ("random", "heuristic")


def check_bot(game: str, text: str, known: Iterable[str]) -> str:
    """`text` if it names one of `known` bots with parameters within bounds, else 400.

    The same check for every API that takes a bot (lobby seats, replay line-ups), so the
    README's promise "bots are named the same everywhere" holds with parameters too.
    """
    known = list(known)
    if not isinstance(text, str) or not 0 < len(text) <= MAX_BOT_SPEC:
        raise PlatformError(400, "invalid_bot", f"a bot is a name of at most {MAX_BOT_SPEC} characters")
    try:
        name, params = parse_bot_spec(text)
    except EngineError as exc:
        raise PlatformError(400, "invalid_bot", str(exc)) from None
    if name not in known:
        raise PlatformError(400, "unknown_bot", f"no bot {name!r} for {game}; known: {', '.join(known)}")
    for key, raw in params.items():
        if key == "rollout" and raw not in ROLLOUTS:
            raise PlatformError(
                400, "invalid_bot", f"bot parameter 'rollout' is one of {', '.join(ROLLOUTS)}"
            )
        limit = BOT_PARAM_MAX.get(key)
        if limit is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            raise PlatformError(
                400, "invalid_bot", f"bot parameter {key!r} wants a number, got {raw!r}"
            ) from None
        if not 0 <= value <= limit:
            raise PlatformError(
                400, "bot_limit", f"bot parameter {key!r} must be from 0 to {limit:g}, got {raw}", limit=limit
            )
    try:  # the rules library's own check: unknown parameters, wrong kinds
        make_bot(load_game(game), text, 0)
    except (EngineError, TypeError, ValueError) as exc:
        raise PlatformError(400, "invalid_bot", str(exc)) from None
    return text


def check_config(game: str, config: Mapping[str, Any], limits: Iterable[engine_pb2.ConfigLimit]) -> None:
    """400 naming the first config field outside the bounds the engine publishes."""
    bounds = {limit.field: limit for limit in limits}
    for name, value in config.items():
        limit = bounds.get(name)
        if limit is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue  # the engine's own parsing says what is wrong with it
        if not limit.minimum <= value <= limit.maximum:
            raise PlatformError(
                400,
                "config_limit",
                f"config field {name!r} of {game} must be from {limit.minimum} to {limit.maximum}",
                field=name,
                minimum=limit.minimum,
                maximum=limit.maximum,
            )
