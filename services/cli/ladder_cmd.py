"""`cultists ladder`: rank bots by playing them against each other with seats rotated.

Every deal is played once per line-up (services/engines/core/ladder.py explains the
rotation), so a seat or a lucky deal cannot pass for strength. The table shows each bot's
win rate with its 95% Wilson interval next to its fair share, and an OpenSkill rating;
`--json` prints the same as one JSON document for scripts and the bench.
"""

from __future__ import annotations

import argparse
import sys

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from services.engines.core.errors import BadConfig
from services.engines.core.ladder import check_bots, lineups, play_ladder, slot_seats

from .common import add_config_arguments, add_game_argument, game_and_config

DEFAULT_BOTS = "random,heuristic,ismcts:iterations=100"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ladder", help="rank bots against each other with seats rotated on the same deals")
    add_game_argument(p)
    add_config_arguments(p)
    p.add_argument(
        "--bots",
        default=DEFAULT_BOTS,
        help="the bots to rank, separated by ',' (or by ';' when a bot has parameters): "
        f"default {DEFAULT_BOTS!r}",
    )
    p.add_argument(
        "--games",
        type=int,
        default=100,
        help="deals; each is played once per line-up, so the games played are a multiple of this",
    )
    p.add_argument("--seed", type=int, default=0, help="deal i uses game seed SEED+i")
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.set_defaults(func=run)


def split_bots(text: str) -> list[str]:
    """`a,b,c`, or `a;ismcts:iterations=50,depth=8;b` when some bot has parameters.

    Unlike `--bots` of `simulate`, a bot with parameters may stand among plain names with
    commas (`random,heuristic,ismcts:iterations=100,depth=8`): a part holding `=` without
    a `:` continues the bot before it.
    """
    if ";" in text:
        parts = [p.strip() for p in text.split(";")]
    else:
        parts = []
        for item in (p.strip() for p in text.split(",")):
            if parts and "=" in item and ":" not in item and ":" in parts[-1]:
                parts[-1] += "," + item
            else:
                parts.append(item)
    return [p for p in parts if p]


def run(args: argparse.Namespace) -> int:
    spec, config, players = game_and_config(args)
    bots = split_bots(args.bots)
    check_bots(spec, bots)  # before the progress bar, so an error is the only output
    if args.games < 1:
        raise BadConfig("--games must be at least 1")
    if args.jobs < 1:
        raise BadConfig("--jobs must be at least 1")
    total = args.games * len(lineups(len(bots), len(slot_seats(spec, players))))
    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=args.json and not console.is_terminal,
    ) as progress:
        task = progress.add_task(f"{spec.title} ladder", total=total)
        result = play_ladder(
            spec,
            config,
            players,
            bots,
            args.games,
            seed=args.seed,
            jobs=args.jobs,
            progress=lambda n: progress.update(task, advance=n),
        )
    doc = result.to_dict()
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        return 0
    _print_table(doc)
    return 0


def _print_table(doc: dict) -> None:
    unit = "teams" if any(len(s) > 1 for s in doc["slots"]) else "seats"
    table = Table(
        title=(
            f"{doc['game']}: {doc['games']} games ({doc['deals']} deals x {len(doc['lineups'])} line-ups), "
            f"{doc['players']} players, {unit} rotated, seeds {doc['seed']}.."
        )
    )
    for col in ("bot", "games", "wins", "win rate", "95% Wilson", "fair share", "mu", "sigma", "ordinal"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for row in sorted(doc["standings"], key=lambda r: -r["ordinal"]):
        mark = "[green]" if row["beats_fair_share"] else ""
        table.add_row(
            row["bot"],
            str(row["games"]),
            str(row["wins"]),
            f"{mark}{row['win_rate']:.1%}",
            f"{row['wilson_low']:.1%} - {row['wilson_high']:.1%}",
            f"{row['fair_share']:.1%}",
            f"{row['mu']:.2f}",
            f"{row['sigma']:.2f}",
            f"{row['ordinal']:.2f}",
        )
    console = Console()
    console.print(table)
    pairs = Table(title="head to head: games where one finished ahead of the other")
    for col in ("bot", "opponent", "ahead", "behind", "rate", "95% Wilson"):
        pairs.add_column(col, justify="left" if col in ("bot", "opponent") else "right")
    for row in doc["head_to_head_rates"]:
        pairs.add_row(
            row["bot"],
            row["opponent"],
            str(row["wins"]),
            str(row["losses"]),
            f"{row['rate']:.1%}",
            f"{row['wilson_low']:.1%} - {row['wilson_high']:.1%}",
        )
    console.print(pairs)
    console.print(
        f"draws {doc['draws']}  decisions {doc['decisions']:,}  {doc['seconds']:.1f} s  "
        "(rating: OpenSkill Plackett-Luce on each game's finishing order; ordinal = mu - 3 sigma)"
    )
