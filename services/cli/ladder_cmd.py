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
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn

from services.engines.core.ladder import check_bots, lineups, play_ladder, slot_seats

from .common import add_config_arguments, add_game_argument, game_and_config
from .options import add_jobs, add_json, add_wide, command, positive_int
from .progress import LineProgress
from .tables import Column, print_table

DEFAULT_BOTS = "random,heuristic,ismcts:iterations=100"


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "ladder",
        "rank bots against each other with seats rotated on the same deals",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_PURE_PYTHON", "COLUMNS"],
    )
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
        type=positive_int,
        default=100,
        metavar="N",
        help="deals; each is played once per line-up, so the games played are a multiple of this",
    )
    p.add_argument("--seed", type=int, default=0, help="deal i uses game seed SEED+i")
    add_jobs(p, "worker processes", default=1)
    add_json(p)
    add_wide(p)
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
    total = args.games * len(lineups(len(bots), len(slot_seats(spec, players))))
    console = Console(stderr=True)
    with LineProgress(
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
    _print_table(doc, args.wide)
    return 0


# Left out first when the terminal is narrow: sigma, mu, wins, games, ordinal, fair share;
# the bot, its win rate and its interval always stay (docs/cli.md).
STANDINGS = [
    Column("bot", wrap=True, justify="left", min_width=14),
    Column("games", drop=3),
    Column("wins", drop=4),
    Column("win rate"),
    Column("95% Wilson"),
    Column("fair share", drop=1),
    Column("mu", drop=5),
    Column("sigma", drop=6),
    Column("ordinal", drop=2),
]
HEAD_TO_HEAD = [
    Column("bot", wrap=True, justify="left", min_width=14),
    Column("opponent", wrap=True, justify="left", min_width=14),
    Column("ahead", drop=2),
    Column("behind", drop=1),
    Column("rate"),
    Column("95% Wilson"),
]
RATING_LEGEND = (
    "mu, sigma: OpenSkill Plackett-Luce rating on each game's finishing order; ordinal = mu - 3 sigma; "
    "a green win rate beats its fair share"
)


def _print_table(doc: dict, wide: bool = False) -> None:
    unit = "teams" if any(len(s) > 1 for s in doc["slots"]) else "seats"
    console = Console()
    rows = [
        [
            row["bot"],
            str(row["games"]),
            str(row["wins"]),
            f"{'[green]' if row['beats_fair_share'] else ''}{row['win_rate']:.1%}",
            f"{row['wilson_low']:.1%}-{row['wilson_high']:.1%}",
            f"{row['fair_share']:.1%}",
            f"{row['mu']:.2f}",
            f"{row['sigma']:.2f}",
            f"{row['ordinal']:.2f}",
        ]
        for row in sorted(doc["standings"], key=lambda r: -r["ordinal"])
    ]
    print_table(
        console,
        f"{doc['game']}: {doc['games']} games ({doc['deals']} deals x {len(doc['lineups'])} line-ups), "
        f"{doc['players']} players, {unit} rotated, seeds {doc['seed']}..",
        STANDINGS,
        rows,
        wide=wide,
        legend=[RATING_LEGEND],
    )
    pairs = [
        [
            row["bot"],
            row["opponent"],
            str(row["wins"]),
            str(row["losses"]),
            f"{row['rate']:.1%}",
            f"{row['wilson_low']:.1%}-{row['wilson_high']:.1%}",
        ]
        for row in doc["head_to_head_rates"]
    ]
    print_table(
        console, "head to head: games where one finished ahead of the other", HEAD_TO_HEAD, pairs, wide=wide
    )
    console.print(f"draws {doc['draws']}  decisions {doc['decisions']:,}  {doc['seconds']:.1f} s")
