"""The strength ladder, measured: heuristic beats random and IS-MCTS beats heuristic in every
game, each over at least 1,000 seat-rotated games with the lower end of the 95% Wilson
interval above the fair share; issue 16's target for the strongest bot: that lower end at
60% or more against the heuristic, at a budget that plays a 4-player game (every seat
IS-MCTS) in under 10 s on one core; and IS-MCTS iterations per second on one core.

On a loaded machine, `BENCH_BOT_DEALS=100 BENCH_BOT_GAMES=crazy_cultists` measures a
smaller run of some games first; rows of games not measured are carried over from the
last results.json with `"carried_over": true`, and a run under 1,000 games misses its
targets by definition.

Budgets use most of the 10 s a 4-player game may take (issue 16): at them, 200 games per
rung took about 9 minutes of wall time per game on the shared 2-core machine (both cores,
`JOBS` worker processes), so the full 1,000-game section takes over two hours. Crazy Cultists and Trash Cult are measured head to
head at 2 players (a legitimate table for both: Trash Cult is for 2-4, Crazy Cultists has a
2-player variant for sweeps), Tricky Cultists at its only size, 4 players in partnerships,
where both partners play the same bot and partnerships swap on the same deals. With two
bots every line-up is played on every deal (A-B then B-A), so the fair share is one half.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, cast

from bench.load import load_average
from services.engines.core.bots import make_bot, parse_bot_spec
from services.engines.core.ismcts import ISMCTSBot
from services.engines.core.ladder import play_ladder
from services.engines.registry import load_game

JOBS = 2
DEALS = int(os.environ.get("BENCH_BOT_DEALS", "500"))  # x 2 line-ups = 1,000 games per rung
SEED = 20_000
STRONG_LOW = 0.60  # issue 16: lower 95% Wilson bound of the strongest bot vs the heuristic
GAME_SECONDS = 10.0  # issue 16: one 4-player game, every seat IS-MCTS, one core

# Per game: players, and the IS-MCTS budget that beats the heuristic at this cost.
# iterations: fixed per decision (reproducible); depth: rollout decisions before the game's
# evaluate scores the position; prior: progressive bias toward the heuristic's move.
LADDERS: dict[str, dict[str, Any]] = {
    # CC-2: 2 players only as the sweep variant, behind the config switch.
    "crazy_cultists": {
        "players": 2,
        "config": {"two_players": True},
        "ismcts": "ismcts:iterations=330,depth=10,prior=1",
    },
    "trash_cult": {"players": 2, "ismcts": "ismcts:iterations=180,depth=6,rollout=heuristic,prior=1"},
    "tricky_cultists": {"players": 4, "ismcts": "ismcts:iterations=150,depth=8,rollout=heuristic,prior=1"},
}
SPEED_POSITIONS = 12
FOUR_PLAYER_SEEDS = 2  # 4-player games timed per game (all seats IS-MCTS, one process)
SPEED_ITERATIONS = 200
POLICY_LOW = 0.60  # issue 32: lower 95% Wilson bound of `policy` vs the heuristic
POLICY_CPU_RATIO = 3.0  # issue 32: policy CPU per decision at most 3x the heuristic's
# BENCH_BOT_POLICY_ONLY=1: only the policy rungs of the chosen games (the other rungs of
# those games are carried over), for a retrained net on a loaded machine.
POLICY_ONLY = os.environ.get("BENCH_BOT_POLICY_ONLY") == "1"


def _rung(game: str, players: int, bots: list[str]) -> dict[str, Any]:
    config = LADDERS[game].get("config")
    result = play_ladder(load_game(game), config, players, bots, DEALS, seed=SEED, jobs=JOBS).to_dict()
    challenger, incumbent = result["standings"]
    return {
        "bots": bots,
        "players": players,
        "games": result["games"],
        "draws": result["draws"],
        "seconds": result["seconds"],
        "win_rate": round(challenger["win_rate"], 4),
        "wilson_95": [round(challenger["wilson_low"], 4), round(challenger["wilson_high"], 4)],
        "fair_share": challenger["fair_share"],
        "beats": challenger["beats_fair_share"],
        "openskill": {
            row["bot"]: {"mu": round(row["mu"], 2), "sigma": round(row["sigma"], 2)}
            for row in (challenger, incumbent)
        },
    }


def _positions(game: str, players: int) -> list[Any]:
    """Decision points with a real choice along heuristic self-play (seeded)."""
    spec = load_game(game)
    found: list[Any] = []
    seed = 0
    while len(found) < SPEED_POSITIONS:
        state = spec.new_state(LADDERS[game].get("config"), players, 77 + seed)
        bots = [make_bot(spec, "heuristic", s) for s in range(players)]
        step = 0
        while not state.is_terminal() and len(found) < SPEED_POSITIONS:
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            if len(legal) > 1 and step % 9 == 0:
                found.append(state.clone())
            state.apply(seat, bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0])
            step += 1
        seed += 1
    return found


def _iterations_per_second(game: str, players: int, bot_spec: str) -> float:
    """One core: a fixed number of iterations at each of a few positions, timed."""
    spec = load_game(game)
    name, params = parse_bot_spec(bot_spec)
    params["iterations"] = str(SPEED_ITERATIONS)
    budget = f"{name}:" + ",".join(f"{k}={v}" for k, v in params.items())
    iterations = 0
    start = time.perf_counter()
    for i, state in enumerate(_positions(game, players)):
        bot = make_bot(spec, budget, i)
        seat = state.to_act()[0]
        bot.choose(state, seat, state.legal_actions(seat))
        iterations += cast(ISMCTSBot, bot).last_iterations
    return iterations / (time.perf_counter() - start)


def _cpu_per_decision(game: str, players: int, bot_spec: str) -> float:
    """CPU seconds per decision of `bot_spec` over the speed positions, repeated (one core)."""
    spec = load_game(game)
    positions = _positions(game, players)
    bots = [make_bot(spec, bot_spec, i) for i in range(len(positions))]
    start = time.process_time()
    for _ in range(20):
        for bot, state in zip(bots, positions, strict=True):
            seat = state.to_act()[0]
            bot.choose(state, seat, state.legal_actions(seat))
    return (time.process_time() - start) / (20 * len(positions))


def _policy_rows(game: str, players: int, ismcts: str) -> dict[str, Any]:
    """Issue 32's rungs: policy vs heuristic, CPU per decision against the heuristic's, and
    IS-MCTS rolling out with `policy` against plain IS-MCTS at the same iterations."""
    row: dict[str, Any] = {"policy_vs_heuristic": _rung(game, players, ["policy", "heuristic"])}
    policy_cpu = _cpu_per_decision(game, players, "policy")
    heuristic_cpu = _cpu_per_decision(game, players, "heuristic")
    row["policy_cpu_per_decision_us"] = round(policy_cpu * 1e6, 1)
    row["heuristic_cpu_per_decision_us"] = round(heuristic_cpu * 1e6, 1)
    row["policy_cpu_ratio"] = round(policy_cpu / heuristic_cpu, 2)
    if os.environ.get("BENCH_BOT_SEARCH_RUNG", "1") == "1":
        name, params = parse_bot_spec(ismcts)
        params["rollout"] = "policy"
        guided = f"{name}:" + ",".join(f"{k}={v}" for k, v in params.items())
        row["ismcts_policy_vs_ismcts"] = _rung(game, players, [guided, ismcts])
    return row


def _policy_targets(game: str, row: dict[str, Any], targets: dict[str, bool]) -> None:
    r = row["policy_vs_heuristic"]
    targets[
        f"{game} policy vs heuristic: Wilson low >= {POLICY_LOW:.0%} over >= 1,000 games "
        f"(got {r['wilson_95'][0]:.1%} over {r['games']})"
    ] = r["wilson_95"][0] >= POLICY_LOW and r["games"] >= 1000
    targets[
        f"{game} policy CPU per decision <= {POLICY_CPU_RATIO:.0f}x heuristic (got {row['policy_cpu_ratio']}x)"
    ] = row["policy_cpu_ratio"] <= POLICY_CPU_RATIO
    s = row.get("ismcts_policy_vs_ismcts")
    got = f"got {s['wilson_95'][0]:.1%} over {s['games']}" if s else "not measured"
    targets[f"{game} IS-MCTS with policy rollouts beats plain IS-MCTS (Wilson low > 1/2; {got})"] = bool(
        s and s["beats"] and s["games"] >= 1000
    )
    print(
        f"  {game} policy vs heuristic: {r['win_rate']:.1%} [{r['wilson_95'][0]:.1%}, {r['wilson_95'][1]:.1%}]"
        f" over {r['games']} games; CPU per decision {row['policy_cpu_per_decision_us']} us vs heuristic"
        f" {row['heuristic_cpu_per_decision_us']} us ({row['policy_cpu_ratio']}x)",
        flush=True,
    )


def _four_player_seconds(game: str, bot_spec: str) -> float:
    """The slowest of a few 4-player games with IS-MCTS in every seat, in this process."""
    spec = load_game(game)
    worst = 0.0
    for seed in range(FOUR_PLAYER_SEEDS):
        state = spec.new_state(None, 4, SEED + seed)
        bots = [make_bot(spec, bot_spec, seed * 4 + s) for s in range(4)]
        start = time.process_time()  # CPU time: one core, whatever else the machine runs
        while not state.is_terminal():
            seat = state.to_act()[0]
            legal = state.legal_actions(seat)
            state.apply(seat, bots[seat].choose(state, seat, legal) if len(legal) > 1 else legal[0])
        worst = max(worst, time.process_time() - start)
    return worst


def _earlier() -> dict[str, Any]:
    path = Path(__file__).with_name("results.json")
    return json.loads(path.read_text()).get("bots", {}) if path.exists() else {}


def run() -> dict[str, Any]:
    chosen = [g for g in os.environ.get("BENCH_BOT_GAMES", ",".join(LADDERS)).split(",") if g]
    earlier = _earlier()
    out: dict[str, Any] = {
        "targets": {},
        "method": (
            f"{DEALS} deals per rung, each played in both line-ups (seats or partnerships "
            f"swapped) = {2 * DEALS} games; {JOBS} worker processes; win = the bot's seat or "
            "team among the winners (draws count as no win); fair share 1/2"
        ),
    }
    for game, setup in LADDERS.items():
        if game not in chosen:
            if game in earlier:
                out[game] = {**earlier[game], "carried_over": True}
                for name, ok in earlier.get("targets", {}).items():
                    if name.startswith(f"{game} "):
                        out["targets"][name] = ok
            continue
        players, ismcts = setup["players"], setup["ismcts"]
        row: dict[str, Any]
        if POLICY_ONLY and game in earlier:
            row = {k: v for k, v in earlier[game].items() if k != "carried_over"}
            row.update(_policy_rows(game, players, ismcts))
            row["rungs_carried_over"] = ["heuristic_vs_random", "ismcts_vs_heuristic"]
            row["policy_load_average"] = load_average()
            out[game] = row
            for name, ok in earlier.get("targets", {}).items():
                if name.startswith(f"{game} ") and "policy" not in name:
                    out["targets"][name] = ok
            _policy_targets(game, row, out["targets"])
            continue
        row = {"players": players, "ismcts_budget": ismcts}
        row["heuristic_vs_random"] = _rung(game, players, ["heuristic", "random"])
        row["ismcts_vs_heuristic"] = _rung(game, players, [ismcts, "heuristic"])
        row["ismcts_iterations_per_second"] = round(_iterations_per_second(game, players, ismcts))
        row["four_player_game_cpu_seconds"] = round(_four_player_seconds(game, ismcts), 2)
        row["load_average"] = load_average()
        row.update(_policy_rows(game, players, ismcts))
        out[game] = row
        _policy_targets(game, row, out["targets"])
        strong = row["ismcts_vs_heuristic"]
        out["targets"][
            f"{game} strongest bot vs heuristic: Wilson low >= {STRONG_LOW:.0%} over >= 1,000 games "
            f"(got {strong['wilson_95'][0]:.1%} over {strong['games']})"
        ] = strong["wilson_95"][0] >= STRONG_LOW and strong["games"] >= 1000
        out["targets"][
            f"{game} 4-player game under {GAME_SECONDS:.0f} s on one core "
            f"(got {row['four_player_game_cpu_seconds']} s)"
        ] = row["four_player_game_cpu_seconds"] < GAME_SECONDS
        for rung, name in (
            ("heuristic_vs_random", "heuristic beats random"),
            ("ismcts_vs_heuristic", "ismcts beats heuristic"),
        ):
            r = row[rung]
            out["targets"][f"{game} {name} ({r['games']} games, Wilson low > 1/2)"] = (
                r["beats"] and r["games"] >= 1000
            )
            print(
                f"  {game} {players}p {' vs '.join(r['bots'])}: {r['win_rate']:.1%} "
                f"[{r['wilson_95'][0]:.1%}, {r['wilson_95'][1]:.1%}] over {r['games']} games, {r['seconds']:.0f} s",
                flush=True,
            )
        print(f"  {game}: {row['ismcts_iterations_per_second']:,} IS-MCTS iterations/s per core", flush=True)
        print(
            f"  {game}: 4-player game, every seat IS-MCTS: {row['four_player_game_cpu_seconds']} s CPU",
            flush=True,
        )
    return out
