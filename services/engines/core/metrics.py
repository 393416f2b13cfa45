"""Engine metrics (architecture decision 9). Defined once per process, labelled by game,
so one process serving several games (as tests do) exports one consistent family."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

RPC_SECONDS = Histogram(
    "cultists_engine_rpc_duration_seconds",
    "Time an engine spends serving one RPC, by game and method.",
    ["game", "method"],
    buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0, 5.0),
)
RPC_ERRORS = Counter(
    "cultists_engine_rpc_errors_total",
    "RPCs that ended in an error status, by game, method and gRPC code.",
    ["game", "method", "code"],
)
ACTIONS_APPLIED = Counter(
    "cultists_engine_actions_applied_total",
    "Actions applied through Apply, by game.",
    ["game"],
)
GAMES_STARTED = Counter("cultists_engine_games_started_total", "Games created by NewGame.", ["game"])
GAMES_FINISHED = Counter("cultists_engine_games_finished_total", "Apply calls that ended a game.", ["game"])
SERVING = Gauge("cultists_engine_serving", "1 while the engine reports SERVING.", ["game"])
