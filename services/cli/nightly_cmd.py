"""`cultists nightly`: run the nightly balance suite now and compare it with the last night.

    cultists nightly --local                       # in-process pool; compare; store under nightly/
    cultists nightly --games 200 --seed 7          # on Celery, another size and master seed
    cultists nightly --local --set crazy_cultists:threshold=12 --json   # preview a rule change

The same steps as the beat's nightly job (services/balance/sweeps/night.py): every installed game's
suite, one Benjamini-Hochberg family over every metric of the night, a practical effect
size before a metric counts as drifted (docs/sweeps.md). A night with `--set` is a preview:
stored and compared, but the next night is still compared with the last real one. A
preview with no stored night to compare with first plays and stores a baseline night of
the rules as they are (same suite, same seeds), and says so.

Nights are stored under the data folder's nightly/ (or `--data DIR`'s). On Celery it needs
the running platform (`make run`): without one it says so (exit status 3).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

from services.engines.core.errors import BadConfig

from .common import balance_clients
from .options import DIRECTORY, add_jobs, add_json, add_redis_url, add_wide, command, positive_int
from .progress import LineProgress
from .tables import Column, print_table

SHOWN = 12  # drifted metrics listed per game without --all


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "nightly",
        "run the nightly balance suite now and report drift since the last night",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_DATA", "NIGHTLY_GAMES", "NIGHTLY_SEED", "REDIS_URL", "COLUMNS"],
        miss="the night could not be stored",
    )
    p.add_argument("--local", action="store_true", help="run in a local process pool instead of Celery")
    p.add_argument(
        "--games",
        type=positive_int,
        default=None,
        metavar="N",
        help="games per cell of every game (default: $NIGHTLY_GAMES, else each game's own size, "
        '400 or more where a game has few cells; docs/sweeps.md, "The size of a night")',
    )
    p.add_argument("--seed", type=int, default=None, help="master seed (default: $NIGHTLY_SEED or 20240101)")
    p.add_argument(
        "--data",
        default=None,
        metavar="DIR",
        help="folder holding the nights (DIR/nightly/; default: the data folder)",
    ).complete = DIRECTORY  # type: ignore[attr-defined]
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="GAME:FIELD=VALUE",
        help="change a config field of one game's suite for this night (repeatable): a preview",
    )
    add_json(p, "print one JSON document instead of tables")
    p.add_argument(
        "--all", action="store_true", help=f"list every drifted metric (default: the first {SHOWN} per game)"
    )
    add_wide(p)
    add_jobs(p)
    add_redis_url(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.balance.sweeps import night

    overrides = night.parse_overrides(args.overrides)
    specs = night.suite(args.games, args.seed, overrides)  # refused here, before anything runs
    archive = night.NightArchive(night.nightly_dir(args.data))
    console = Console(stderr=True)
    play = _local_player(args.jobs, console) if args.local else _celery_player(args, console)
    if overrides:
        missing = sorted(s.game for s in specs if s.game not in archive.latest_by_game())
        if missing:
            console.print(
                f"nightly: no night of {', '.join(missing)} is stored under {archive.root} to compare the preview "
                "with: playing a baseline night of the rules as they are first (same suite, same seeds)"
            )
            baseline = night.suite(args.games, args.seed, only=missing)
            drift = _night(night, archive, baseline, play, console, args, preview=False)
            if not drift.get("stored"):
                console.print(f"the baseline night could NOT be stored under {archive.root} (see the log)")
                return 1
            console.print(f"baseline night {drift['night']} stored in {drift['stored']}")
    drift = _night(night, archive, specs, play, console, args, preview=bool(overrides))
    doc = night.json_document(drift)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        _print(doc, drift, args)
    if drift.get("stored"):
        console.print(f"night {drift['night']} stored in {drift['stored']}")
        return 0
    console.print(f"night {drift['night']} could NOT be stored under {archive.root} (see the log)")
    return 1


Player = Callable[[list], dict[str, Any]]


def _night(night, archive, specs, play: Player, console: Console, args, preview: bool) -> dict[str, Any]:
    """Play one night of `specs`, compare it with the last stored one and store it."""
    total = sum(s.total_games for s in specs)
    console.print(
        f"nightly: {len(specs)} {_plural(len(specs), 'game')}, {total:,} games of play{' (preview)' if preview else ''}"
    )
    started = time.time()
    tonight = play(specs)
    info = {
        "mode": "local" if args.local else "celery",
        "games_per_cell": specs[0].games if specs else 0,
        "games_per_cell_by_game": {s.game: s.games for s in specs},
        "seed": specs[0].seed if specs else None,
        "overrides": night.parse_overrides(args.overrides) if preview else {},
        "seconds": round(time.time() - started, 3),
    }
    return night.close_night(archive, tonight, info=info, preview=preview)


def _bar(console: Console) -> Progress:
    return LineProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )


def _local_player(jobs: int | None, console: Console) -> Player:
    def play(specs) -> dict[str, Any]:
        from services.balance.sweeps.local import run_local
        from services.balance.sweeps.night import night_game

        tonight = {}
        with _bar(console) as bar:
            for spec in specs:
                cells = len(spec.cells())
                task = bar.add_task(f"{spec.game} ({cells} {_plural(cells, 'cell')})", total=spec.total_games)

                def advance(done: int, _total: int, task: TaskID = task) -> None:
                    bar.update(task, completed=done)

                summary, _replays, results = run_local(spec, jobs, advance, sweep_id=f"nightly-{spec.game}")
                tonight[spec.game] = night_game(spec, summary, results)
        return tonight

    return play


def _celery_player(args: argparse.Namespace, console: Console) -> Player:
    store, app = balance_clients(args.redis_url, ", or run it here with --local")  # before any game

    def play(specs) -> dict[str, Any]:
        from services.balance.sweeps import control
        from services.balance.sweeps.night import night_game_of_sweep
        from services.balance.sweeps.store import FINISHED

        kind = "adhoc" if args.overrides else "nightly"
        ids = {spec.game: control.submit(spec, store, app, kind=kind) for spec in specs}
        last_nudge = time.monotonic()
        with _bar(console) as bar:
            tasks = {
                game: bar.add_task(f"{game} (sweep {sweep_id})", total=spec.total_games)
                for (game, sweep_id), spec in zip(ids.items(), specs, strict=True)
            }
            while True:
                states = {game: control.progress(store, sweep_id) or {} for game, sweep_id in ids.items()}
                for game, p in states.items():
                    bar.update(tasks[game], completed=p.get("games_done", 0))
                if all(p.get("status") in FINISHED for p in states.values()):
                    break
                if time.monotonic() - last_nudge > 30:
                    for sweep_id in ids.values():
                        control.nudge(store, app, sweep_id)  # a finisher lost to a crash: queue again
                    last_nudge = time.monotonic()
                time.sleep(0.5)
        bad = {g: p.get("status") for g, p in states.items() if p.get("status") != "done"}
        if bad:
            raise BadConfig(f"nightly sweeps did not finish: {bad}; nothing was compared or stored")
        tonight = {}
        for game, sweep_id in ids.items():
            summary = store.summary(sweep_id)
            assert summary is not None
            tonight[game] = night_game_of_sweep(store, sweep_id, summary)
        return tonight

    return play


def _plural(n: int, word: str) -> str:
    return word if n == 1 else f"{word}s"


def _p(value: float) -> str:
    """An adjusted p-value as reports write it: below 0.001 is `<0.001`, never `0`."""
    return "<0.001" if value < 0.001 else f"{value:.3f}"


# Left out first when the terminal is narrow: before, after; the cell, the metric, the
# change with its interval and the adjusted p always stay (docs/cli.md).
DRIFT_COLUMNS = [
    Column("cell", wrap=True, justify="left", min_width=14),
    Column("metric", wrap=True, justify="left", min_width=10),
    Column("before", drop=2),
    Column("after", drop=1),
    Column("change [95% CI]"),
    Column("adj. p"),
]


def _print(doc: dict[str, Any], drift: dict[str, Any], args: argparse.Namespace) -> None:
    console = Console()
    previous = doc["previous_night"] or "none stored: nothing to compare with"
    console.print(
        f"night {doc['night']} against {previous}: {doc['family_size']} metrics in one BH family, "
        f"q = {doc['settings'].get('q')}, smallest change counted {100 * doc['settings'].get('min_rate_change', 0):.1f} "
        f"points ({doc['settings'].get('min_turns_change')} turns for mean length)"
    )
    for game, part in doc["games"].items():
        drifted = part["drifted"]
        power = part.get("power", [])
        if power:  # what tonight could have caught: the typical cell's smallest detectable change
            rates = [m["mde"] for m in power if "turns" not in m["metric"]]
            turns = [m["mde"] for m in power if "turns" in m["metric"]]
            console.print(
                f"{game}: smallest detectable change (80% power, after BH), typical cell: "
                + (f"rates {100 * sorted(rates)[len(rates) // 2]:.1f} points" if rates else "")
                + (f", mean length {sorted(turns)[len(turns) // 2]:.1f} turns" if turns else "")
            )
        if not drifted:
            console.print(f"{game}: {part['compared']} metrics compared, none drifted")
            continue
        ranked = sorted(drifted, key=lambda d: (d["p_adjusted"], -abs(d["difference"])))
        shown = ranked if args.all else ranked[:SHOWN]
        rows = []
        for d in shown:
            lo, hi = d["interval"]
            rows.append(
                [
                    d["cell"],
                    d["metric"],
                    f"{d['before']:.4g}",
                    f"{d['after']:.4g}",
                    f"{d['difference']:+.3g} [{lo:+.3g}, {hi:+.3g}]",
                    _p(d["p_adjusted"]),
                ]
            )
        more = len(ranked) - len(shown)
        print_table(
            console,
            f"{game}: {part['compared']} metrics compared, {len(drifted)} drifted"
            + (f" (the {len(shown)} surest shown)" if more else ""),
            DRIFT_COLUMNS,
            rows,
            wide=args.wide,
            legend=[f"... and {more} more: --all lists them, --json prints them all"] if more else [],
        )
    for game, part in drift["games"].items():
        if part["new_cells"] and drift.get("previous_night"):
            n = len(part["new_cells"])
            console.print(
                f"{game}: {n} new {_plural(n, 'cell')} without a previous night: {', '.join(part['new_cells'])}"
            )
