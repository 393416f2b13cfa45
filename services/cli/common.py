"""Argument pieces several subcommands share, so `--set`, `--players` and `--bots` mean one
thing, and the one way a command finds the running platform and its data folder."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Any

from services.engines.core.config import config_to_dict, parse_set_options
from services.engines.core.errors import BadConfig
from services.engines.core.game import GameSpec
from services.engines.registry import GAME_MODULES, load_game
from services.runtime.errors import Unreachable


def add_game_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game", choices=sorted(GAME_MODULES), help="which game")


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help="seats at the table (default: the game's usual)",
    )
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
    least = spec.min_players_for(config)
    if not least <= players <= spec.max_players and not spec.min_players <= players < least:
        # Out of every range the game has (those below `least` are for the rules to refuse
        # in their own words, naming the switch that seats them: CC-2).
        raise BadConfig(
            f"{spec.title} takes {least}-{spec.max_players} players, not {players}"
            + _fewer_with(spec, config, least)
        )
    spec.new_state(config, players, 0)  # what the rules refuse for this table (CC-2), before any work
    return spec, config, players


def _fewer_with(spec: GameSpec, config: Any, least: int) -> str:
    """`(2 with --set two_players=true)` when a switch of the config seats fewer."""
    if least <= spec.min_players or not dataclasses.is_dataclass(config):
        return ""
    for f in dataclasses.fields(config):
        if getattr(config, f.name) is False:
            try:
                switched = spec.make_config({**config_to_dict(config), f.name: True})
            except BadConfig:
                continue
            fewer = spec.min_players_for(switched)
            if fewer < least:
                span = str(fewer) if fewer == least - 1 else f"{fewer}-{least - 1}"
                return f" ({span} with --set {f.name}=true)"
    return ""


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
        raise BadConfig(f"--bots names {len(parts)} bots for {players} seats: name one, or one per seat")
    return parts


def platform_redis(explicit: str | None, alternative: str = "") -> str:
    """The running platform's Redis: `--redis-url`, $REDIS_URL, else the run file of the
    `cultists run` that holds the data folder. Never a guess: with none of those, this
    says there is no platform to talk to (`no_platform`)."""
    from services.runtime.topology import platform_redis_url

    url = explicit or platform_redis_url()
    if url:
        return url
    raise no_platform(alternative)


def no_platform(alternative: str = "") -> Unreachable:
    """The one line for "nothing to talk to" (exit status 3), `alternative` naming what
    else the command can do (e.g. run `--local`)."""
    from services.runtime.topology import data_dir

    return Unreachable(
        f"no running platform found (no `cultists run` holds {data_dir()}, and REDIS_URL is not set); "
        "start one with `make run` in another terminal, or pass --redis-url" + alternative
    )


def balance_clients(explicit: str | None, alternative: str = ""):
    """The sweep store and light Celery client of the running platform (`platform_redis`).
    The store is a Redis Cluster where REDIS_CLUSTER (or the running platform) says so;
    the broker is CELERY_BROKER_URL, the running platform's, or the store's Redis."""
    import os

    from services.balance.sweeps.store import SweepStore
    from services.runtime.data_folder import read_run_file
    from services.runtime.task_client import task_client

    url = platform_redis(explicit, alternative)
    facts = read_run_file()
    from_run = url == facts.get("redis_url")
    cluster = os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes") or (
        from_run and bool(facts.get("redis_cluster"))
    )
    broker = os.environ.get("CELERY_BROKER_URL") or (facts.get("broker_url") if from_run else None) or url
    return SweepStore.from_url(url, cluster), task_client(broker)


def output_folder(out: str | None, kind: str, name: str) -> Path:
    """Where a command writes a report: `--out`, else `<data folder>/<kind>/<name>`."""
    if out:
        return Path(out)
    from services.runtime.topology import data_dir

    return data_dir() / kind / name
