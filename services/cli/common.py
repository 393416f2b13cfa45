"""Argument pieces several subcommands share, so `--set` and `--bots` mean one thing."""

from __future__ import annotations

import argparse

from services.engines.core.config import parse_set_options
from services.engines.core.errors import BadConfig
from services.engines.core.game import GameSpec
from services.engines.registry import GAME_MODULES, load_game


def add_game_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=sorted(GAME_MODULES), help="which game")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=None, help="seats at the table")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a config field (repeatable), e.g. --set variant=fiendish",
    )


def game_and_config(args: argparse.Namespace) -> tuple[GameSpec, object, int]:
    """Resolve game, config and player count; BadConfig says what is wrong."""
    try:
        spec = load_game(args.game)
    except KeyError:
        raise BadConfig(f"game {args.game!r} is not installed") from None
    config = spec.make_config(parse_set_options(args.overrides))
    players = spec.default_players if args.players is None else args.players
    if not spec.min_players <= players <= spec.max_players:
        raise BadConfig(f"{spec.title} takes {spec.min_players}-{spec.max_players} players, not {players}")
    spec.new_state(config, players, 0)  # what the rules refuse for this table (CC-2), before any work
    return spec, config, players


def bot_lineup(text: str | None, players: int) -> list[str]:
    """`--bots a,b` for a table of n: one name fills every seat; otherwise one per seat.

    Bot specs may themselves hold commas (`ismcts:iterations=200,rollout=heuristic`), so
    seats are separated by `;` when any spec has parameters, and by `,` otherwise.
    """
    if not text:
        return ["random"] * players
    parts = [p.strip() for p in (text.split(";") if ";" in text or ":" in text else text.split(","))]
    parts = [p for p in parts if p]
    if len(parts) == 1:
        return parts * players
    if len(parts) != players:
        raise BadConfig(f"--bots names {len(parts)} bots for {players} seats")
    return parts


# Where a client of the platform queues work when nothing says otherwise: workers/app.py's
# own default broker.
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def balance_clients(explicit: str | None):
    """The sweep store and light Celery client of the platform to talk to: `--redis`,
    $REDIS_URL, the run file of a running `cultists run`, else a local Redis on 6379. The
    store is a Redis Cluster where REDIS_CLUSTER (or the running platform) says so; the
    broker is CELERY_BROKER_URL, the running platform's, or the store's Redis."""
    import os

    from services.balance.sweeps.store import SweepStore
    from services.runtime.task_client import task_client
    from services.runtime.topology import platform_redis_url, read_run_file

    facts = read_run_file()
    url = explicit or platform_redis_url() or DEFAULT_REDIS_URL
    from_run = url == facts.get("redis_url")
    cluster = os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes") or (
        from_run and bool(facts.get("redis_cluster"))
    )
    broker = os.environ.get("CELERY_BROKER_URL") or (facts.get("broker_url") if from_run else None) or url
    return SweepStore.from_url(url, cluster), task_client(broker)
