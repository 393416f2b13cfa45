"""`cultists tune`: search the rules for a fair game, on Celery (or `--local`), with proof.

    cultists tune spec.yaml                  # evaluations as sweeps on Celery
    cultists tune spec.yaml --local -j 2     # the same trials in a local pool
    cultists tune spec.yaml --json           # print the JSON summary

The spec is validated completely before any game is played (status 2 and what is wrong
otherwise). The report (HTML, PNG plots, summary.json) goes to `--out` (default
var/tunes/<tune id>). See docs/tune.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from .common import balance_clients


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="search config fields for balanced rules, confirmed on fresh seeds")
    p.add_argument("spec", help="tune spec file (YAML or JSON); see docs/tune.md")
    p.add_argument("--local", action="store_true", help="play in a local process pool instead of Celery")
    p.add_argument("-j", "--processes", type=int, default=None, help="local pool size (default: CPU count)")
    p.add_argument("--out", default=None, help="report directory (default var/tunes/<tune id>)")
    p.add_argument("--json", action="store_true", help="print the JSON summary instead of the headline")
    p.add_argument(
        "--redis",
        default=None,
        help="Redis URL (default $REDIS_URL, else the running `cultists run`'s, from its run file)",
    )
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
        runner: Any = LocalRunner(args.processes)
        tune_id, mode = f"local-{new_id()}", "local"
    else:
        store, app = balance_clients(args.redis)
        runner, tune_id, mode = CeleryRunner(store, app), new_id(), "celery"

    def progress(p: dict[str, Any]) -> None:
        if p.get("phase") == "confirming":
            console.print(f"confirming on {spec.confirm:,} fresh games per table ...")
        elif p.get("phase") == "batch":
            console.print(
                f"{p['trials']} trials, {p['spent']:,}/{p['budget']:,} games; best so far {p['best']} "
                f"(score {p['best_score']})"
            )

    summary = run_tune(spec, runner, tune_id, progress, mode)
    page = write_report(Path(args.out or f"var/tunes/{tune_id}"), summary)
    if args.json:
        import orjson

        sys.stdout.buffer.write(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for line in headline(summary):
            print(line)
    console.print(f"report: {page}")
    verdict = (summary.get("best") or {}).get("confirmed", {}).get("verdict")
    return 0 if verdict == "confirmed" else 1
