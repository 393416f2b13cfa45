"""`cultists nightly`: run the nightly balance suite now and compare it with the last night.

    cultists nightly --local                       # in-process pool; compare; store under var/nightly/
    cultists nightly --games 200 --seed 7          # on Celery, another size and master seed
    cultists nightly --local --set crazy_cultists:threshold=12 --json   # preview a rule change

The same steps as the beat's nightly job (services/balance/sweeps/night.py): every installed game's
suite, one Benjamini-Hochberg family over every metric of the night, a practical effect
size before a metric counts as drifted (docs/sweeps.md). A night with `--set` is a preview:
stored and compared, but the next night is still compared with the last real one.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from services.engines.core.errors import BadConfig

from .common import DEFAULT_REDIS_URL, balance_clients


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "nightly", help="run the nightly balance suite now and report drift since the last night"
    )
    p.add_argument("--local", action="store_true", help="run in a local process pool instead of Celery")
    p.add_argument("--games", type=int, default=None, help="games per cell (default $NIGHTLY_GAMES or 400)")
    p.add_argument("--seed", type=int, default=None, help="master seed (default $NIGHTLY_SEED or 20240101)")
    p.add_argument(
        "--data",
        default=None,
        help="folder holding the nights (DIR/nightly/; default the platform's data folder)",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="GAME:FIELD=VALUE",
        help="change a config field of one game's suite for this night (repeatable): a preview",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("-j", "--processes", type=int, default=None, help="local pool size (default: CPU count)")
    p.add_argument(
        "--redis", default=None, help="Redis URL (default $REDIS_URL, else the running platform's)"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.balance.sweeps import night

    if args.games is not None and args.games < 1:
        raise BadConfig("--games must be at least 1")
    overrides = night.parse_overrides(args.overrides)
    specs = night.suite(args.games, args.seed, overrides)  # refused here, before anything runs
    console = Console(stderr=True)
    total = sum(s.total_games for s in specs)
    console.print(f"nightly: {len(specs)} games, {total:,} games of play{' (preview)' if overrides else ''}")
    started = time.time()
    tonight = (
        _local(specs, args.processes, console)
        if args.local
        else _celery(specs, args, console, bool(overrides))
    )
    info = {
        "mode": "local" if args.local else "celery",
        "games_per_cell": specs[0].games if specs else 0,
        "seed": specs[0].seed if specs else None,
        "overrides": overrides,
        "seconds": round(time.time() - started, 3),
    }
    archive = night.NightArchive(night.nightly_dir(args.data))
    drift = night.close_night(archive, tonight, info=info, preview=bool(overrides))
    doc = night.json_document(drift)
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        _print(doc, drift)
    if drift.get("stored"):
        console.print(f"night {drift['night']} stored in {drift['stored']}")
        return 0
    console.print(f"night {drift['night']} could NOT be stored under {archive.root} (see the log)")
    return 1


def _local(specs, processes: int | None, console: Console) -> dict[str, Any]:
    from services.balance.sweeps.local import run_local
    from services.balance.sweeps.night import night_game

    tonight = {}
    for spec in specs:
        console.print(f"  {spec.game}: {spec.total_games:,} games in {len(spec.cells())} cells")
        summary, _replays, results = run_local(spec, processes, sweep_id=f"nightly-{spec.game}")
        tonight[spec.game] = night_game(spec, summary, results)
    return tonight


def redis_for(explicit: str | None) -> str:
    """`--redis`, else $REDIS_URL, else the Redis of the platform `cultists run` started."""
    from services.runtime.topology import platform_redis_url

    return explicit or platform_redis_url() or DEFAULT_REDIS_URL


def _celery(specs, args: argparse.Namespace, console: Console, preview: bool) -> dict[str, Any]:
    from services.balance.sweeps import control
    from services.balance.sweeps.night import night_game_of_sweep
    from services.balance.sweeps.store import FINISHED

    store, app = balance_clients(redis_for(args.redis))
    kind = "adhoc" if preview else "nightly"
    ids = {spec.game: control.submit(spec, store, app, kind=kind) for spec in specs}
    for game, sweep_id in ids.items():
        console.print(f"  {game}: sweep {sweep_id}")
    last_nudge = time.monotonic()
    while True:
        statuses = {game: store.status(sweep_id) for game, sweep_id in ids.items()}
        if all(s in FINISHED for s in statuses.values()):
            break
        if time.monotonic() - last_nudge > 30:
            for sweep_id in ids.values():
                control.nudge(store, app, sweep_id)  # a finisher lost to a crash: queue again
            last_nudge = time.monotonic()
        time.sleep(0.5)
    bad = {g: s for g, s in statuses.items() if s != "done"}
    if bad:
        raise BadConfig(f"nightly sweeps did not finish: {bad}; nothing was compared or stored")
    tonight = {}
    for game, sweep_id in ids.items():
        summary = store.summary(sweep_id)
        assert summary is not None
        tonight[game] = night_game_of_sweep(store, sweep_id, summary)
    return tonight


def _print(doc: dict[str, Any], drift: dict[str, Any]) -> None:
    console = Console()
    previous = doc["previous_night"] or "none stored: nothing to compare with"
    console.print(
        f"night {doc['night']} against {previous}: {doc['family_size']} metrics in one BH family, "
        f"q = {doc['settings'].get('q')}, smallest change counted {100 * doc['settings'].get('min_rate_change', 0):.1f} "
        f"points ({doc['settings'].get('min_turns_change')} turns for mean length)"
    )
    for game, part in doc["games"].items():
        if not part["drifted"]:
            console.print(f"{game}: {part['compared']} metrics compared, none drifted")
            continue
        table = Table(title=f"{game}: {part['compared']} metrics compared, {len(part['drifted'])} drifted")
        for col in ("cell", "metric", "before", "after", "change [95% CI]", "adjusted p"):
            table.add_column(col)
        for d in part["drifted"]:
            lo, hi = d["interval"]
            table.add_row(
                d["cell"],
                d["metric"],
                f"{d['before']:.4g}",
                f"{d['after']:.4g}",
                f"{d['difference']:+.4g} [{lo:+.4g}, {hi:+.4g}]",
                f"{d['p_adjusted']:.3g}",
            )
        console.print(table)
    for game, part in drift["games"].items():
        if part["new_cells"] and drift.get("previous_night"):
            console.print(f"{game}: new cells without a previous night: {', '.join(part['new_cells'])}")
