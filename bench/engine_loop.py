"""One speed measurement in a child interpreter, so compiled and interpreted engines (and
OpenSpiel, in its own virtualenv) each run alone on the same pinned core.

`python -m bench.engine_loop random GAME SECONDS`: random-play decisions/s with the loop
the issue compares against OpenSpiel (`to_act()`, `legal_actions(seat)`, `apply(seat, a)`).
`heuristic GAME SECONDS`: heuristic-bot games/s, as a sweep plays them.
`ismcts GAME SECONDS`: IS-MCTS iterations/s at the ladder's budget (bench/bots.py).
Prints one JSON object; `CULTISTS_PURE_PYTHON=1` in the environment picks the source.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any, cast

import services.engines
from services.engines.core.bots import make_bot
from services.engines.core.ismcts import ISMCTSBot
from services.engines.core.play import bot_seed, play_game
from services.engines.registry import load_game


def random_play(game: str, seconds: float) -> dict[str, Any]:
    spec = load_game(game)
    players = spec.default_players
    choose = random.Random(7).choice
    decisions = games = 0
    seed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = spec.new_state(None, players, seed)
        seed += 1
        while not state.is_terminal():
            seat = state.to_act()[0]
            state.apply(seat, choose(state.legal_actions(seat)))
            decisions += 1
        games += 1
    elapsed = time.perf_counter() - start
    return {"decisions_per_second": decisions / elapsed, "games": games}


def heuristic_games(game: str, seconds: float) -> dict[str, Any]:
    spec = load_game(game)
    players = spec.default_players
    bots = ["heuristic"] * players
    games = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_game(spec, None, players, 5000 + games, bots, record_actions=False)
        games += 1
    return {"games_per_second": games / (time.perf_counter() - start), "games": games}


def ismcts_iterations(game: str, seconds: float) -> dict[str, Any]:
    from .bots import LADDERS

    spec = load_game(game)
    ladder = LADDERS[game]
    players = ladder["players"]
    iterations = done = 0
    seed = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = spec.new_state(ladder.get("config"), players, 9000 + seed)
        bot = make_bot(spec, ladder["ismcts"], bot_seed(seed, 0))
        seed += 1
        # A few decisions in, so the search sees a position with history.
        rng = random.Random(seed)
        for _ in range(6):
            if state.is_terminal():
                break
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))
        if state.is_terminal():
            continue
        seat = state.to_act()[0]
        bot.choose(state, seat, state.legal_actions(seat))
        iterations += cast(ISMCTSBot, bot).last_iterations
        done += 1
    return {"iterations_per_second": iterations / (time.perf_counter() - start), "searches": done}


KINDS = {"random": random_play, "heuristic": heuristic_games, "ismcts": ismcts_iterations}

if __name__ == "__main__":
    kind, game, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    result = KINDS[kind](game, seconds)
    result["compiled"] = services.engines.compiled()
    print(json.dumps(result))
