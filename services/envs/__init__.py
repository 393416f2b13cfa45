"""The three games as research environments (PettingZoo AEC, Gymnasium, OpenSpiel).

An entry point beside the gateway and the CLI: it imports the engines only, and the
learning libraries (the `rl` extra) only here, so the platform never needs them.
"""

from __future__ import annotations

from typing import Any


def pettingzoo_env(
    game: str, players: int | None = None, config: dict[str, Any] | None = None, seed: int | None = None
):
    """A PettingZoo `AECEnv` of `game`; ValueError names a refused game, count or config."""
    from .aec import CultistsEnv

    return CultistsEnv(game, players=players, config=config, seed=seed)


def single_agent(
    game: str,
    seat: int = 0,
    opponents: str = "heuristic",
    players: int | None = None,
    config: dict[str, Any] | None = None,
    seed: int | None = None,
    illegal: str = "lose",
):
    """A Gymnasium env: `seat` plays, every other seat is the engine bot `opponents`; an
    action outside the mask loses the episode (reward -1, `illegal="lose"`) or raises."""
    from .single import SingleAgentEnv

    return SingleAgentEnv(
        game, seat=seat, opponents=opponents, players=players, config=config, seed=seed, illegal=illegal
    )
