"""`cultists sweep`: run a balance sweep on Celery (or `--local`) with a live progress bar.

    cultists sweep spec.yaml                 # queue on Celery, follow, write the report
    cultists sweep spec.yaml --local -j 4    # same plan in a local pool of 4 processes
    cultists sweep spec.yaml --no-wait       # queue and print the sweep id
    cultists sweep --follow ID               # pick up a sweep again (after Ctrl-C, on another machine)
    cultists sweep --cancel ID

The spec is validated completely before anything is queued; a bad one exits with status 2
and says what is wrong. The report (HTML, PNG plots, JSON summary, per-game CSV, replay
records) goes to `--out` (default sweeps/<sweep id> in the data folder). On Celery it
needs the running platform (`make run`): without one it says so (exit status 3) and never
queues on a Redis it guessed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from services.engines.core.errors import BadConfig
from services.runtime.errors import Unreachable

from .common import balance_clients, output_folder
from .options import FILE, add_jobs, add_json, add_out, add_redis_url, add_wide, command, positive_int
from .progress import LineProgress
from .tables import Column, Group, print_table

T = TypeVar("T")
LOCALLY = ", or run it here with --local"
# What the `flags` column holds: the tests of a cell that Benjamini-Hochberg rejected.
FLAGS_LEGEND = (
    "flags: the cell's balance tests rejected at q = 0.05 in the sweep's one Benjamini-Hochberg "
    "family: seat / team = win rates differ across seats / teams, group:NAME = across that group "
    "(e.g. group:cult); the HTML report has each test"
)


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "sweep",
        "run a balance sweep (Celery, or --local) and write its report",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_DATA", "REDIS_URL", "GATEWAY_URL", "COLUMNS"],
        miss="the sweep was cancelled or failed, or --cancel found it finished",
    )
    p.add_argument(
        "spec", nargs="?", help="sweep spec file (YAML or JSON); see docs/sweeps.md"
    ).complete = FILE  # type: ignore[attr-defined]
    p.add_argument("--local", action="store_true", help="run in a local process pool instead of Celery")
    p.add_argument(
        "--games",
        type=positive_int,
        default=None,
        metavar="N",
        help="games per cell instead of the spec's (a quick look at a big sweep)",
    )
    add_jobs(p)
    add_out(p, "sweeps")
    p.add_argument("--no-wait", action="store_true", help="queue the sweep, print its id and return")
    p.add_argument("--follow", metavar="ID", help="follow a queued sweep and write its report")
    p.add_argument("--cancel", metavar="ID", help="cancel a queued or running sweep")
    add_redis_url(p)
    p.add_argument(
        "--replay-base",
        default=None,
        metavar="URL",
        help="prefix of replay links in the report (default: $GATEWAY_URL, else the run's)",
    )
    add_json(p, "print the JSON summary's aggregates instead of a table")
    add_wide(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.runtime.topology import gateway_url

    replay_base = gateway_url() if args.replay_base is None else args.replay_base
    if args.cancel:
        return _cancel(args)
    if args.follow:
        return _follow(args, args.follow, replay_base)
    if not args.spec:
        raise BadConfig("name a sweep spec file, or use --follow ID / --cancel ID")
    from services.balance.sweeps.spec import load_spec_file, parse_spec

    spec = load_spec_file(args.spec)  # refused here, before anything is queued
    if args.games is not None:
        spec = parse_spec({**spec.to_dict(), "games": args.games, "chunk": min(spec.chunk, args.games)})
    if args.local:
        return _local(args, spec, replay_base)
    from services.balance.sweeps import control

    store, app = balance_clients(args.redis_url, LOCALLY)
    sweep_id = control.submit(spec, store, app)
    print(
        f"sweep {sweep_id}: {spec.total_games:,} games in {len(spec.cells())} cells queued", file=sys.stderr
    )
    if args.no_wait:
        print(sweep_id)
        return 0
    return _follow(args, sweep_id, replay_base, store=store, app=app)


def _cancel(args: argparse.Namespace) -> int:
    from services.balance.sweeps import control

    store, _app = balance_clients(args.redis_url)
    if not store.exists(args.cancel):
        raise BadConfig(f"no sweep {args.cancel!r}")
    if control.cancel(store, args.cancel):
        print(f"sweep {args.cancel} cancelled")
        return 0
    print(f"sweep {args.cancel} had already finished ({store.status(args.cancel)})")
    return 1


def _bar(console: Console) -> Progress:
    return LineProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]:,.0f} games/s"),
        TimeRemainingColumn(),
        console=console,
        refresh_per_second=4,
    )


def _follow(args: argparse.Namespace, sweep_id: str, replay_base: str, store=None, app=None) -> int:
    from services.balance.sweeps import control
    from services.balance.sweeps.aggregate import game_rows
    from services.balance.sweeps.simulate import unpack
    from services.balance.sweeps.spec import parse_stored_spec

    if store is None:
        store, app = balance_clients(args.redis_url)
    console = Console(stderr=True)
    try:
        first = _patiently(console, lambda: control.progress(store, sweep_id))
        if first is None:
            raise BadConfig(f"no sweep {sweep_id!r}")
        last_nudge = time.monotonic()
        with _bar(console) as bar:
            task = bar.add_task(f"sweep {sweep_id}", total=first["total_games"], rate=0.0)
            while True:
                p = _patiently(console, lambda: control.progress(store, sweep_id))
                if p is None:
                    raise BadConfig(f"sweep {sweep_id} is gone from Redis (expired, or Redis lost its data)")
                bar.update(task, completed=p["games_done"], rate=p["games_per_second"])
                if p["status"] in ("done", "cancelled", "failed"):
                    break
                if p["chunks_done"] >= p["total_chunks"] and time.monotonic() - last_nudge > 30:
                    control.nudge(store, app, sweep_id)  # a finisher lost to a crash: queue again
                    last_nudge = time.monotonic()
                time.sleep(0.5)
        if p["status"] != "done":
            console.print(f"sweep {sweep_id} {p['status']}" + (f": {p['error']}" if p.get("error") else ""))
            return 1
        summary = _patiently(console, lambda: store.summary(sweep_id))
    except KeyboardInterrupt:
        console.print(
            f"sweep {sweep_id} goes on; follow it with --follow {sweep_id} or stop it with --cancel {sweep_id}"
        )
        return 130
    assert summary is not None
    spec = parse_stored_spec(summary["spec"])
    # Streamed from Redis a few hundred chunks at a time: a 10M-game sweep fits in memory.
    results = (unpack(blob) for _chunk_id, blob in store.iter_chunk_blobs(sweep_id))
    out = output_folder(args.out, "sweeps", sweep_id)
    page = _write(out, summary, game_rows(spec, results), store.replays(sweep_id), replay_base)
    _print(summary, page, args)
    return 0


def _patiently(console: Console, read: Callable[[], T], give_up_after: float = 600.0) -> T:
    """`read()` from Redis, waiting out a restart or a network blip instead of dying with a
    traceback: the sweep lives in Redis and goes on without us, so we only have to wait.
    (redis-py reconnects by itself on the next command.)"""
    import redis

    deadline = time.monotonic() + give_up_after
    delay = 0.5
    said = False
    while True:
        try:
            value = read()
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            if time.monotonic() > deadline:
                raise Unreachable(
                    f"Redis unreachable for {give_up_after:.0f} s ({exc}); the sweep goes on without us: "
                    "follow it again with --follow once Redis is back"
                ) from None
            if not said:
                console.print(f"Redis unreachable ({exc}); reconnecting...")
                said = True
            time.sleep(delay)
            delay = min(delay * 2, 5.0)
            continue
        if said:
            console.print("Redis is back; following again")
        return value


def _local(args: argparse.Namespace, spec, replay_base: str) -> int:
    from services.balance.sweeps.aggregate import game_rows
    from services.balance.sweeps.local import run_local
    from services.balance.sweeps.store import new_id

    sweep_id = f"local-{new_id()}"
    console = Console(stderr=True)
    start = time.perf_counter()
    with _bar(console) as bar:
        task = bar.add_task(f"sweep {sweep_id}", total=spec.total_games, rate=0.0)

        def update(done: int, total: int) -> None:
            elapsed = time.perf_counter() - start
            bar.update(task, completed=done, rate=done / elapsed if elapsed else 0.0)

        summary, replays, results = run_local(spec, args.jobs, update, sweep_id=sweep_id)
    out = output_folder(args.out, "sweeps", sweep_id)
    page = _write(out, summary, game_rows(spec, results), replays, replay_base)
    _print(summary, page, args)
    return 0


def _write(out: Path, summary: dict[str, Any], rows, replays, replay_base: str) -> Path:
    from services.balance.sweeps.report import write_report

    return write_report(out, summary, rows, replays, replay_base=replay_base)


# Left out first when the terminal is narrow: mean turns, draws, games, fair share; the
# cell (wrapped below 30 characters), its seats' win rates and its flags always stay
# (docs/cli.md).
COLUMNS = [
    Column("cell", wrap=True, justify="left", min_width=30),
    Column("games", drop=3),
    Column("seat win rates"),
    Column("fair", drop=1),
    Column("draws", drop=4),
    Column("mean turns", drop=5),
    Column("flags", wrap=True, justify="left", min_width=5),
]


def _print(summary: dict[str, Any], page: Path, args: argparse.Namespace) -> None:
    agg = summary["aggregates"]
    if args.json:
        import orjson

        sys.stdout.buffer.write(orjson.dumps(agg, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        print(agg.get("verdict", ""))  # the one line a designer reads first
        power = (agg.get("power") or {}).get("by_metric", [])
        if power:
            print(
                "smallest detectable effects (80% power, after BH): "
                + "; ".join(
                    f"{m['metric']} {m['mde']:.1f} turns"
                    if "turns" in m["metric"]
                    else f"{m['metric']} {100 * m['mde']:.1f} points"
                    for m in power
                )
            )
        rows: list[Any] = []
        current = None
        for c in agg["cells"]:
            # Cells grouped by their grid variant (the label's first part), each row
            # labelled by the rest: players and line-up, with spaces to wrap at.
            variant, _, rest = c["label"].partition(" | ")
            if variant != current:
                rows.append(Group(variant))
                current = variant
            rows.append(
                [
                    rest.replace(",", ", ") or variant,
                    str(c["games"]),
                    " ".join(f"{s['rate']:.3f}" for s in c["seats"]),
                    f"{c['fair_share']:.3f}",
                    f"{c['draws']['rate']:.3f}",
                    f"{c['length']['mean']:.1f}",
                    "skipped: " + c["skipped"] if c.get("skipped") else ", ".join(c["flags"]) or "-",
                ]
            )
        flagged = any(c["flags"] for c in agg["cells"])
        print_table(
            Console(),
            f"{summary['name']}: {agg['games_counted']:,} games",
            COLUMNS,
            rows,
            wide=args.wide,
            legend=[FLAGS_LEGEND]
            if flagged
            else ["flags: none of the cells' balance tests was rejected (q = 0.05)"],
        )
    run = summary["run"]
    print(
        f"{run['mode']} run: {run['seconds']:.1f} s, {run['games_per_second']:,.0f} games/s; report: {page}",
        file=sys.stderr,
    )
