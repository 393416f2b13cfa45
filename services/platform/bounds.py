"""What one request may ask the platform to compute or store (issue 15).

Every entry point that takes a bot name (the lobby's seats, the replay API's line-ups) or
config overrides goes through these checks, so a bot spec with ten million iterations or a
deck of a million cards is refused with a 400 that names the field and its limit, before
any engine is asked. The bounds of config fields are the engine's own (`Describe`'s
`config_limits`); the bounds of bot parameters are the gateway's, because they price a
request's CPU, which is the gateway's concern.

A table is priced as a whole too (issue 27 item 3): its bot seats' search budgets per
decision add up, and the sum is bounded (`check_table_bots`), since a six-seat table of
maximal searches costs six times one. A bot-only table (no human seat) is only somebody's
spectacle: opened by a guest or an anonymous client it may seat cheap bots only, so free
identities cannot buy searches that run for hours with nobody playing. The engine keeps
its own ceiling as well (services/engines/core/budget.py).
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
# Who opened a table, as the platform is told: an anonymous client, a guest player, a player
# with an account. Internal openers (matchmaking, which seats humans) pass None.
UNTRUSTED_OPENERS = ("anonymous", "guest")


def search_budget(game: str, text: str) -> tuple[int, float]:
    """What one decision of the bot `text` (already checked) may search: (iterations, 0)
    or (0, ms) for a searching bot, defaults included; (0, 0) for one that does not search
    (random, the games' heuristics)."""
    bot = make_bot(load_game(game), text, 0)
    ms = float(getattr(bot, "ms", 0.0) or 0.0)
    if ms > 0:
        return 0, ms
    return int(getattr(bot, "iterations", 0) or 0), 0.0


def check_table_bots(
    game: str,
    bots: list[str | None],
    opened_by: str | None,
    max_iterations: int,
    max_ms: float,
) -> None:
    """The table's bot seats (None: a human seat), each already passed by `check_bot`:
    403 for a bot-only table with a searching bot opened by a guest or anonymous client,
    400 naming the bound when the seats' budgets per decision add up to more than a table
    may use."""
    seated = [name for name in bots if name is not None]
    budgets = [search_budget(game, name) for name in seated]
    searching = [name for name, (iterations, ms) in zip(seated, budgets, strict=True) if iterations or ms]
    if searching and opened_by in UNTRUSTED_OPENERS and len(seated) == len(bots):
        who = "a guest" if opened_by == "guest" else "an anonymous client"
        raise PlatformError(
            403,
            "bot_only_search",
            f"a table of bots only, opened by {who}, seats cheap bots only (random, heuristic); "
            f"sign in with an account or take a seat yourself to play against {searching[0]!r}",
        )
    iterations = sum(i for i, _ in budgets)
    if iterations > max_iterations:
        raise PlatformError(
            400,
            "table_bot_budget",
            f"the table's bots search {iterations} iterations per decision in all; a table may "
            f"use at most {max_iterations}",
            limit=max_iterations,
        )
    ms = sum(m for _, m in budgets)
    if ms > max_ms:
        raise PlatformError(
            400,
            "table_bot_budget",
            f"the table's bots search {ms:g} ms per decision in all; a table may use at most {max_ms:g}",
            limit=max_ms,
        )


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
