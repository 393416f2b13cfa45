"""`cultists cards`: which card is too strong, by experiment: each card's count -1 / +1 (or removed).

    cultists cards spec.yaml --local -j 2    # the ablation sweep in a local pool
    cultists cards spec.yaml                 # on Celery (the running platform)
    cultists cards spec.yaml --json          # print the ablation report as JSON

The spec is a sweep spec's table (game, seed, games per cell, players, lineups, config)
with `cards` (default: every card the game counts) and `changes` (default [-1, 1], or
remove); it is validated completely before any game is played (status 2 otherwise). One
sweep plays the base rules and one cell per card change on the same seeds; the report
ranks the cards by the change in their holders' win rate, with intervals. It goes to
`--out` (default cards/<id> in the data folder): the sweep's report folder (report.html,
summary.json, games/) plus cards.json and cards.html. See docs/sweeps.md.
"""

from __future__ import annotations

import argparse
import html
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console

from .common import balance_clients, output_folder
from .options import FILE, add_jobs, add_json, add_out, add_redis_url, command


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "cards",
        "ablation sweeps: rank cards by what one copy more or less does to their holders",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_DATA", "REDIS_URL"],
        miss="the sweep did not finish",
    )
    p.add_argument("spec", help="card ablation spec file (YAML or JSON); see docs/sweeps.md").complete = FILE  # type: ignore[attr-defined]
    p.add_argument("--local", action="store_true", help="play in a local process pool instead of Celery")
    add_jobs(p)
    add_out(p, "cards")
    add_json(p, "print the ablation report as JSON instead of the ranking")
    add_redis_url(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.balance.sweeps.ablation import load_cards_file, report_from_folder, report_html, report_text
    from services.balance.sweeps.aggregate import game_rows
    from services.balance.sweeps.report import write_report
    from services.balance.sweeps.store import new_id

    spec = load_cards_file(args.spec)  # refused here, before any game is played
    console = Console(stderr=True)
    sweep = spec.sweep
    plan = f"card ablation: {len(spec.variants)} changes, {len(sweep.cells())} cells, {sweep.total_games:,} games"
    if args.local:
        console.print(plan)
        from services.balance.sweeps.local import run_local

        sweep_id = f"local-{new_id()}"
        summary, replays, results = run_local(sweep, args.jobs, sweep_id=sweep_id)
        out = output_folder(args.out, "cards", sweep_id)
        write_report(out, summary, game_rows(sweep, results), replays)
        games = out / "games"
    else:
        from services.balance.sweeps import control

        store, app = balance_clients(args.redis_url, ", or run it here with --local")
        sweep_id = control.submit(sweep, store, app)
        console.print(f"{plan}: sweep {sweep_id} queued")
        waited = _wait(store, app, sweep_id, console)
        if waited is None:
            return 1
        summary = waited
        out = output_folder(args.out, "cards", sweep_id)
        write_report(out, summary, None, store.replays(sweep_id))
        games = Path((summary.get("records") or {}).get("path", out)) / "games"
    report = report_from_folder(spec, games)
    report["sweep"] = sweep_id
    (out / "cards.json").write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    (out / "cards.html").write_text(report_html(report, html.escape))
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for line in report_text(report):
            print(line)
    console.print(f"report: {out / 'cards.html'}")
    return 0


def _wait(store: Any, app: Any, sweep_id: str, console: Console) -> dict[str, Any] | None:
    """The sweep's summary once it is done (None if it was cancelled or failed)."""
    from services.balance.sweeps import control

    last_nudge = time.monotonic()
    while True:
        p = control.progress(store, sweep_id)
        if p is None:
            console.print(f"sweep {sweep_id} is gone from Redis")
            return None
        if p["status"] in ("cancelled", "failed"):
            console.print(f"sweep {sweep_id} {p['status']}: {p.get('error') or ''}")
            return None
        if p["status"] == "done":
            return store.summary(sweep_id)
        if p["chunks_done"] >= p["total_chunks"] and time.monotonic() - last_nudge > 30:
            control.nudge(store, app, sweep_id)
            last_nudge = time.monotonic()
        time.sleep(0.5)
