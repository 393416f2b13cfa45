"""Where each part of the platform listens, in one place.

Every address can be overridden by an environment variable, which is how docker-compose
and Kubernetes point the gateway and workers at engines and Redis; the defaults are what
`cultists run` uses on a laptop.
"""

from __future__ import annotations

import os

# The data folder and the run file live in data_folder.py; re-exported here because every
# address below may come from the run file.
from services.engines.registry import GAMES, Game

from .data_folder import data_dir as data_dir
from .data_folder import read_run_file as read_run_file
from .data_folder import run_file as run_file
from .errors import BadInput
from .ports import PortUse

# Each game's engine and metrics ports are its registry entry's (services/engines/registry.py).
WORKER_METRICS_PORTS = {"sweeps": 9104, "tables": 9105, "tunes": 9106, "bots": 9107}
GATEWAY_PORT = 8000
PROMETHEUS_PORT = 9090


def _port(variable: str, default: int) -> int:
    given = os.environ.get(variable)
    if not given:
        return default
    try:
        port = int(given)
    except ValueError:
        port = -1
    if not 0 < port < 65536:
        raise BadInput(f"{variable}={given!r} is not a port number: give one from 1 to 65535")
    return port


def _game(game: str) -> Game:
    entry = GAMES.get(game)
    if entry is None:
        raise BadInput(f"no installed game {game!r} ({', '.join(GAMES)})")
    return entry


def engine_port(game: str) -> int:
    return _port(f"ENGINE_PORT_{game.upper()}", _game(game).port)


def engine_metrics_port(game: str) -> int:
    return _port(f"ENGINE_METRICS_PORT_{game.upper()}", _game(game).metrics_port)


def worker_metrics_port(queue: str) -> int:
    return _port(f"WORKER_METRICS_PORT_{queue.upper()}", WORKER_METRICS_PORTS[queue])


def gateway_port() -> int:
    return _port("GATEWAY_PORT", GATEWAY_PORT)


def prometheus_port() -> int:
    return _port("PROMETHEUS_PORT", PROMETHEUS_PORT)


def platform_ports(games: list[str], queues: list[str], prometheus: bool) -> list[PortUse]:
    """Every fixed port `cultists run` binds (its embedded Redis picks a free one), in
    start order: what the run checks before it starts anything."""
    uses = []
    for g in games:
        uses.append(PortUse(f"{g} engine", engine_port(g), f"ENGINE_PORT_{g.upper()}"))
        uses.append(
            PortUse(f"{g} engine metrics", engine_metrics_port(g), f"ENGINE_METRICS_PORT_{g.upper()}")
        )
    uses.append(PortUse("gateway", gateway_port(), "GATEWAY_PORT"))
    uses += [
        PortUse(f"{q} worker metrics", worker_metrics_port(q), f"WORKER_METRICS_PORT_{q.upper()}")
        for q in queues
    ]
    if prometheus:
        uses.append(PortUse("prometheus", prometheus_port(), "PROMETHEUS_PORT"))
    return uses


def engine_address(game: str) -> str:
    """`host:port` of `game`'s engine: ENGINE_ADDR_<GAME>, else what a local run wrote,
    else the local default."""
    given = os.environ.get(f"ENGINE_ADDR_{game.upper()}")
    if given:
        return given
    return read_run_file().get("engines", {}).get(game) or f"127.0.0.1:{engine_port(game)}"


def redis_url() -> str | None:
    return os.environ.get("REDIS_URL") or None


def platform_redis_url() -> str | None:
    """The Redis of the running platform: REDIS_URL, else the one `cultists run` wrote in
    its run file (its embedded Redis has a free-picked port), else None.

    For clients of the platform (`cultists sweep`, `cultists status`); `cultists run`
    itself reads only REDIS_URL, to decide whether to start its own Redis.
    """
    return redis_url() or read_run_file().get("redis_url") or None


def gateway_url() -> str:
    return (
        os.environ.get("GATEWAY_URL")
        or read_run_file().get("gateway_url")
        or f"http://127.0.0.1:{gateway_port()}"
    )


def prometheus_url() -> str | None:
    """Prometheus's base URL: PROMETHEUS_URL, else what a local run wrote; None when neither
    names one (no run, or a run without the binary): a platform may run without it."""
    return os.environ.get("PROMETHEUS_URL") or read_run_file().get("prometheus_url") or None
