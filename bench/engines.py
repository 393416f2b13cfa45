"""Random-play speed of each rules engine on one core, and serialised state size; the
compiled engines against the interpreted source and against OpenSpiel's C++ `crazy_eights`
(issue 18), each in its own child process pinned to the same core, in the same run.

The machine is shared and noisy, so contenders are interleaved over several rounds and each
keeps its best round: ratios within one run are the figures to read, not absolutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.load import load_average
from services.engines.core.play import play_game
from services.engines.core.serial import state_to_bytes
from services.engines.registry import available_games, load_game

# Decisions per second each engine must reach in random play (issues 2, 3, 4).
TARGET_DECISIONS_PER_SECOND = {"crazy_cultists": 50_000, "trash_cult": 30_000, "tricky_cultists": 50_000}
STATE_BYTES_LIMIT = 4096

ROOT = Path(__file__).resolve().parent.parent
# OpenSpiel is a yardstick, never a project dependency: it lives in a throwaway virtualenv.
OPENSPIEL_VENV = Path(os.environ.get("CULTISTS_OPENSPIEL_VENV", "/tmp/cultists-bench-openspiel"))
ROUNDS = 3
ROUND_SECONDS = 2.0

# OpenSpiel's loop, as the issue measured it: `legal_actions()` then `apply_action()` on
# every node. Its deal and its draws are chance nodes, which that loop applies like any
# other node; their time is counted (ours deal inside `new_state` and `apply`, also timed),
# but they are not decisions: a decision is a seat's choice, which is what our loop counts.
# So the timed loop only counts nodes and games, and an untimed replay of the same games
# (the same seeded choices) counts the nodes where a player chose: no extra call in the timed
# loop slows OpenSpiel down. Both rates are reported.
_OPENSPIEL_LOOP = r"""
import json, random, sys, time
import pyspiel
game = pyspiel.load_game("crazy_eights")
seconds = float(sys.argv[1])
choose = random.Random(7).choice
nodes = games = 0
start = time.perf_counter()
while time.perf_counter() - start < seconds:
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(choose(state.legal_actions()))
        nodes += 1
    games += 1
elapsed = time.perf_counter() - start
choose = random.Random(7).choice
players = replayed = 0
for _ in range(games):
    state = game.new_initial_state()
    while not state.is_terminal():
        players += not state.is_chance_node()
        state.apply_action(choose(state.legal_actions()))
        replayed += 1
assert replayed == nodes, (replayed, nodes)
print(json.dumps({"decisions_per_second": players / elapsed, "nodes_per_second": nodes / elapsed,
                  "games": games}))
"""


def _core() -> int:
    """The core every contender is pinned to: the last one this process may use."""
    return max(os.sched_getaffinity(0))


def _child(argv: list[str], pure: bool = False, timeout: float = 300) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "CULTISTS_PURE_PYTHON"}
    if pure:
        env["CULTISTS_PURE_PYTHON"] = "1"
    core = _core()
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=lambda: os.sched_setaffinity(0, {core}),
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv[:4]} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _loop(kind: str, game: str, seconds: float, pure: bool) -> dict[str, Any]:
    return _child([sys.executable, "-m", "bench.engine_loop", kind, game, str(seconds)], pure=pure)


def _openspiel_python() -> tuple[Path | None, str]:
    """The throwaway virtualenv's interpreter with `open-spiel` installed, or why not."""
    python = OPENSPIEL_VENV / "bin" / "python"
    check = [str(python), "-c", "import pyspiel"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python, "ok"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(OPENSPIEL_VENV)], check=True, capture_output=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "open-spiel"],
            check=True,
            capture_output=True,
            timeout=900,
        )
        subprocess.run(check, check=True, capture_output=True)
    except (subprocess.SubprocessError, OSError) as exc:
        return None, f"open-spiel could not be installed into {OPENSPIEL_VENV}: {type(exc).__name__}"
    return python, "ok"


def _compare(games: list[str]) -> dict[str, Any]:
    """Compiled vs interpreted vs OpenSpiel, interleaved round by round on one core."""
    import services.engines

    out: dict[str, Any] = {"core": _core(), "compiled_available": services.engines.compiled()}
    openspiel, note = _openspiel_python()
    best: dict[str, float] = {}

    def keep(key: str, value: float) -> None:
        best[key] = max(best.get(key, 0.0), value)

    for _ in range(ROUNDS):
        if openspiel is not None:
            result = _child([str(openspiel), "-c", _OPENSPIEL_LOOP, str(ROUND_SECONDS)])
            keep("openspiel", result["decisions_per_second"])
            keep("openspiel_nodes", result["nodes_per_second"])
        for game in games:
            for pure in (False, True):
                result = _loop("random", game, ROUND_SECONDS, pure)
                keep(f"{game}/{'interpreted' if pure else 'compiled'}", result["decisions_per_second"])
    out["openspiel_crazy_eights_decisions_per_second"] = round(best["openspiel"]) if openspiel else None
    out["openspiel_crazy_eights_nodes_per_second"] = round(best["openspiel_nodes"]) if openspiel else None
    out["openspiel_note"] = note
    for game in games:
        row: dict[str, Any] = {}
        for mode in ("compiled", "interpreted"):
            row[f"random_decisions_per_second_{mode}"] = round(best[f"{game}/{mode}"])
        row["random_speedup"] = round(best[f"{game}/compiled"] / best[f"{game}/interpreted"], 2)
        if openspiel is not None:
            row["random_vs_openspiel"] = round(best[f"{game}/compiled"] / best["openspiel"], 2)
        for kind, key, seconds in (
            ("heuristic", "games_per_second", 3.0),
            ("ismcts", "iterations_per_second", 4.0),
        ):
            for pure in (False, True):
                mode = "interpreted" if pure else "compiled"
                row[f"{kind}_{key}_{mode}"] = round(_loop(kind, game, seconds, pure)[key], 1)
            row[f"{kind}_speedup"] = round(
                row[f"{kind}_{key}_compiled"] / row[f"{kind}_{key}_interpreted"], 2
            )
        out[game] = row
        line = (
            f"  {game}: random {row['random_decisions_per_second_compiled']:,} compiled vs "
            f"{row['random_decisions_per_second_interpreted']:,} interpreted decisions/s "
            f"({row['random_speedup']}x)"
        )
        if openspiel is not None:
            line += f", {row['random_vs_openspiel']}x OpenSpiel"
        line += (
            f"; heuristic {row['heuristic_games_per_second_compiled']} vs "
            f"{row['heuristic_games_per_second_interpreted']} games/s; IS-MCTS "
            f"{row['ismcts_iterations_per_second_compiled']} vs "
            f"{row['ismcts_iterations_per_second_interpreted']} iterations/s"
        )
        print(line, flush=True)
    if openspiel is None:
        print(f"  OpenSpiel comparison skipped: {note}")
    else:
        print(
            f"  OpenSpiel crazy_eights (C++ from Python): {best['openspiel']:,.0f} player decisions/s "
            f"({best['openspiel_nodes']:,.0f} nodes/s, chance nodes included), same core"
        )
    return out


def _largest_state(game: str, seeds: range) -> int:
    spec = load_game(game)
    largest = 0
    for seed in seeds:
        state = spec.new_state(None, spec.max_players, seed)
        while not state.is_terminal():
            largest = max(largest, len(state_to_bytes(state)))
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            state.apply(seat, legal[(seed + state.decisions) % len(legal)])
        largest = max(largest, len(state_to_bytes(state)))
    return largest


def run(seconds_per_game: float = 8.0) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}, "load_average": load_average()}
    out["compiled"] = compared = _compare(available_games())
    if compared["openspiel_crazy_eights_decisions_per_second"]:
        for game in available_games():
            out["targets"][f"{game} compiled random decisions/s >= OpenSpiel crazy_eights (same core)"] = (
                compared[game]["random_vs_openspiel"] >= 1.0
            )
    for game in available_games():
        spec = load_game(game)
        players = spec.default_players
        bots = ["random"] * players
        play_game(spec, None, players, 0, bots, record_actions=False)  # warm up
        games = decisions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds_per_game:
            rec = play_game(spec, None, players, 1000 + games, bots, record_actions=False)
            games += 1
            decisions += rec.decisions
        elapsed = time.perf_counter() - start
        dps = decisions / elapsed
        size = _largest_state(game, range(20))
        out[game] = {
            "players": players,
            "games": games,
            "decisions_per_second": round(dps),
            "games_per_second": round(games / elapsed, 2),
            "max_state_bytes": size,
        }
        out["targets"][f"{game} random decisions/s >= {TARGET_DECISIONS_PER_SECOND[game]:,}"] = (
            dps >= TARGET_DECISIONS_PER_SECOND[game]
        )
        out["targets"][f"{game} state <= {STATE_BYTES_LIMIT} bytes"] = size <= STATE_BYTES_LIMIT
        print(f"  {game}: {dps:,.0f} decisions/s, {games / elapsed:.1f} games/s, max state {size} B")
    out["load_average_after"] = load_average()
    return out
