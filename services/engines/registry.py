"""The one list of games: every layer looks a game up here, and nothing else names one.

Each entry says where the game's package is (its `GAME`, a GameSpec, and its `proto.py`,
whose `MESSAGES` the gRPC engine packs views and details with) and which ports a local
run (`cultists run`) serves it on. What is derived from this list, or checked against it
by a test (tests/core/test_registry.py): the run's engine and metrics ports
(services/runtime/topology.py), the modules Cython compiles (deploy/compile_engines.py),
the package data in pyproject.toml, docker-compose's and Kubernetes' engine services, the
gateway's engine addresses and the Prometheus targets.

A game that lives outside this tree (a plug-in, or the test-only game in
tests/games/take_away) is added with `register_game`, in-process, or, for every process
the platform starts, by naming it in CULTISTS_EXTRA_GAMES (`name=package[@port:metrics]`,
comma-separated), read when this module is first imported. docs/engine-guide.md says what
such a package must hold.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing this list loads no engine module (deploy/compile_engines.py reads it)
    from .core.game import GameSpec
    from .core.messages import GameMessages

EXTRA_GAMES_ENV = "CULTISTS_EXTRA_GAMES"


@dataclass(frozen=True)
class Game:
    """Where a game is, and where a local run serves it."""

    module: str  # the package holding GAME (a GameSpec) and proto.py (MESSAGES)
    port: int  # the engine's gRPC port under `cultists run` (ENGINE_PORT_<GAME> overrides)
    metrics_port: int  # its /metrics port under `cultists run` (ENGINE_METRICS_PORT_<GAME>)
    builtin: bool = True  # shipped in this tree: compiled, packaged and deployed with it


GAMES: dict[str, Game] = {
    "crazy_cultists": Game("services.engines.crazy_cultists", 50051, 9101),
    "trash_cult": Game("services.engines.trash_cult", 50052, 9102),
    "tricky_cultists": Game("services.engines.tricky_cultists", 50053, 9103),
}
# name -> package, for the callers that only need where a game is (kept in step with GAMES).
GAME_MODULES: dict[str, str] = {name: game.module for name, game in GAMES.items()}


def service_name(name: str) -> str:
    """A game's engine service in docker-compose and Kubernetes: `engine-trash-cult`."""
    return "engine-" + name.replace("_", "-")


def builtin_games() -> list[str]:
    """The games shipped in this tree (what is compiled, packaged and deployed)."""
    return [name for name, game in GAMES.items() if game.builtin]


def register_game(name: str, module: str, port: int | None = None, metrics_port: int | None = None) -> Game:
    """Add a game from outside this tree; its ports default to the next free ones after the
    listed games'. Registering the same game again is a no-op; another package under a
    listed name is refused."""
    if not name.isidentifier() or name != name.lower():
        raise ValueError(
            f"a game's name is a lower-case identifier (it names env vars and ports), got {name!r}"
        )
    known = GAMES.get(name)
    if known is not None:
        if known.module != module:
            raise ValueError(f"game {name!r} is already {known.module!r}, not {module!r}")
        return known
    game = Game(
        module,
        port if port is not None else max(g.port for g in GAMES.values()) + 1,
        metrics_port if metrics_port is not None else max(g.metrics_port for g in GAMES.values()) + 1,
        builtin=False,
    )
    GAMES[name] = game
    GAME_MODULES[name] = module
    return game


def _register_from_env(value: str) -> None:
    for item in filter(None, (part.strip() for part in value.split(","))):
        name, eq, rest = item.partition("=")
        module, _, ports = rest.partition("@")
        port, _, metrics = ports.partition(":")
        if not eq or not module:
            raise ValueError(f"{EXTRA_GAMES_ENV}: {item!r} is not name=package[@port:metrics_port]")
        register_game(
            name.strip(), module.strip(), int(port) if port else None, int(metrics) if metrics else None
        )


def load_game(name: str) -> GameSpec:
    """The GameSpec for `name`; KeyError if no such game is installed."""
    module = _module(name)
    try:
        return importlib.import_module(module).GAME
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise KeyError(name) from None
        raise


def load_messages(name: str) -> GameMessages:
    """The game's protobuf messages, declared in its package's `proto.py`."""
    return load_part(name, "proto").MESSAGES


def load_part(name: str, part: str) -> ModuleType:
    """A module of the game's package by its conventional name (`proto`, `action_space`);
    KeyError for no such game, ModuleNotFoundError when its package has no such module."""
    return importlib.import_module(_module(name) + "." + part)


def has_part(name: str, part: str) -> bool:
    """Whether the game's package has the module `part` (found, not imported); a game that
    is one module, not a package (a test's), has none."""
    try:
        return importlib.util.find_spec(_module(name) + "." + part) is not None
    except ModuleNotFoundError:  # its module is no package
        return False


def _module(name: str) -> str:
    game = GAMES.get(name)
    if game is None:
        raise KeyError(name)
    return game.module


def available_games() -> list[str]:
    out = []
    for name in GAMES:
        try:
            load_game(name)
        except KeyError:
            continue
        out.append(name)
    return out


_register_from_env(os.environ.get(EXTRA_GAMES_ENV, ""))
