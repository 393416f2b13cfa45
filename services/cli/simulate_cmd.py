"""`cultists simulate`: play N bot games in-process; JSON lines or a progress bar + table.

`--json` prints one JSON object a game (JSON lines, so a long run streams and `| head`
works); `--jsonl` is its older spelling.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

from services.engines.core.bots import make_bot
from services.engines.core.play import play_game

from .common import add_config_arguments, add_game_argument, bot_lineup, game_and_config
from .options import add_wide, command, positive_int
from .progress import LineProgress
from .tables import Column, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "simulate",
        "play bot games in-process and print how they went",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_PURE_PYTHON", "COLUMNS"],
    )
    add_game_argument(p)
    add_config_arguments(p)
    p.add_argument("--games", type=positive_int, default=100, metavar="N", help="games to play")
    p.add_argument("--seed", type=int, default=0, help="game i uses seed SEED+i")
    p.add_argument(
        "--bots",
        default=None,
        help="one bot for every seat, or one per seat (',' or ';' between them; default: random)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per game (JSON lines)")
    p.add_argument("--jsonl", dest="json", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--actions", action="store_true", help="include each game's action list (replayable)")
    add_wide(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    spec, config, players = game_and_config(args)
    bots = bot_lineup(args.bots, players)
    for b in set(bots):
        make_bot(spec, b, 0)  # refuse a bad bot name before playing anything
    if args.json:
        out = sys.stdout.buffer
        for i in range(args.games):
            rec = play_game(spec, config, players, args.seed + i, bots, record_actions=args.actions)
            line = rec.summary()
            if args.actions:
                line["config"] = rec.config
                line["actions"] = rec.actions
            out.write(orjson.dumps(line) + b"\n")
        out.flush()
        return 0
    return _interactive(spec, config, players, bots, args)


def _interactive(spec, config, players: int, bots: list[str], args: argparse.Namespace) -> int:
    console = Console(stderr=True)
    wins: Counter[int] = Counter()
    draws = turns = decisions = 0
    start = time.perf_counter()
    with LineProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:.0f} games/s"),
        TimeRemainingColumn(),
        console=console,
    ) as progress:
        task = progress.add_task(spec.title, total=args.games, rate=0.0)
        for i in range(args.games):
            rec = play_game(spec, config, players, args.seed + i, bots, record_actions=False)
            for w in rec.winners:
                wins[w] += 1
            draws += not rec.winners
            turns += rec.turns
            decisions += rec.decisions
            elapsed = time.perf_counter() - start
            progress.update(task, advance=1, rate=(i + 1) / elapsed if elapsed else 0.0)
    elapsed = time.perf_counter() - start
    out = Console()
    print_table(
        out,
        f"{spec.title}: {args.games} games, {players} players, seeds {args.seed}..",
        [
            Column("seat"),
            Column("bot", wrap=True, justify="left"),
            Column("wins", drop=1),
            Column("win rate"),
        ],
        [[str(s), bots[s], str(wins[s]), f"{wins[s] / args.games:.1%}"] for s in range(players)],
        wide=args.wide,
    )
    out.print(
        f"draws {draws}  mean turns {turns / args.games:.1f}  mean decisions {decisions / args.games:.1f}  "
        f"{args.games / elapsed:.1f} games/s  {decisions / elapsed:,.0f} decisions/s"
    )
    return 0
