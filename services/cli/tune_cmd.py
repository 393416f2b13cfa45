"""`cultists tune`: search the rules for a fair game, on Celery (or `--local`), with proof.

    cultists tune spec.yaml                  # evaluations as sweeps on Celery
    cultists tune spec.yaml --local -j 2     # the same trials in a local pool
    cultists tune spec.yaml --json           # print the JSON summary

The spec is validated completely before any game is played (status 2 and what is wrong
otherwise). The report (HTML, PNG plots, summary.json) goes to `--out` (default
tunes/<tune id> in the data folder). On Celery it needs the running platform (`make run`):
without one it says so (exit status 3). See docs/tune.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

from .common import balance_clients, output_folder
from .options import FILE, add_jobs, add_json, add_out, add_redis_url, command
from .progress import LineProgress


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "tune",
        "search config fields for balanced rules, confirmed on fresh seeds",
        description=__doc__.split("\n\n", 1)[1],
        environment=["CULTISTS_DATA", "REDIS_URL"],
        miss="the best rules found were not confirmed on fresh seeds",
    )
    p.add_argument("spec", help="tune spec file (YAML or JSON); see docs/tune.md").complete = FILE  # type: ignore[attr-defined]
    p.add_argument("--local", action="store_true", help="play in a local process pool instead of Celery")
    add_jobs(p)
    add_out(p, "tunes")
    add_json(p, "print the JSON summary instead of the headline")
    add_redis_url(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from services.balance.sweeps.store import new_id
    from services.balance.tune.evaluate import CeleryRunner, LocalRunner
    from services.balance.tune.report import headline, write_report
    from services.balance.tune.run import run_tune
    from services.balance.tune.spec import load_tune_file

    spec = load_tune_file(args.spec)  # refused here, before any game is played
    console = Console(stderr=True)
    if args.local:
        runner: Any = LocalRunner(args.jobs)
        tune_id, mode = f"local-{new_id()}", "local"
    else:
        store, app = balance_clients(args.redis_url, ", or run it here with --local")
        runner, tune_id, mode = CeleryRunner(store, app), new_id(), "celery"

    with LineProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        search = bar.add_task("tune: searching", total=spec.budget)

        def progress(p: dict[str, Any]) -> None:
            if p.get("phase") == "confirming":
                bar.update(search, completed=p["spent"], description="tune: searched")
                console.print(f"best so far confirmed on {spec.confirm:,} fresh games per table ...")
            elif p.get("phase") == "batch":
                bar.update(
                    search,
                    completed=min(p["spent"], spec.budget),
                    description=f"tune: {p['trials']} trials, best score {p['best_score']}",
                )

        summary = run_tune(spec, runner, tune_id, progress, mode)
    page = write_report(output_folder(args.out, "tunes", tune_id), summary)
    if args.json:
        import orjson

        sys.stdout.buffer.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for line in headline(summary):
            print(line)
    console.print(f"report: {page}")
    verdict = (summary.get("best") or {}).get("confirmed", {}).get("verdict")
    return 0 if verdict in ("confirmed", "no_change_needed") else 1
