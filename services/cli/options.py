"""How every subcommand's flags and help read, so the same thing is asked the same way.

One parser class for `cultists` and every subcommand (so a subcommand added anywhere,
`admin` included, gets the one-line errors and the help layout for free), the flags
several commands share (`-j/--jobs`, `--redis-url`, `--json`, `--wide`, `--out`), and the
environment variables each command reads, listed under its help. An old spelling of a flag
(`--processes`, `--redis`, `--jsonl`) keeps working as a hidden alias.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterable
from typing import Any

import shtab

from services.runtime.errors import BadInput

# What `cultists completion` offers for an argument naming a file or a folder.
FILE = shtab.FILE
DIRECTORY = shtab.DIRECTORY

# Every environment variable a command reads, in words; each command lists its own.
ENVIRONMENT = {
    "CULTISTS_DATA": "the data folder (default: the running platform's, else ~/.local/share/cultists)",
    "XDG_DATA_HOME": "moves the per-user default data folder to $XDG_DATA_HOME/cultists",
    "CULTISTS_OPERATOR": "name:password: make (or promote) that account an operator once the platform is up",
    "REDIS_URL": "the platform's Redis (default: the running `cultists run`'s, from its run file)",
    "REDIS_CLUSTER": "true: REDIS_URL names a node of a Redis Cluster (default: the running platform's mode)",
    "CELERY_BROKER_URL": "Celery's broker (default: the running platform's, else REDIS_URL outside cluster mode)",
    "GATEWAY_URL": "the gateway's base URL (default: the running platform's)",
    "PROMETHEUS_URL": "Prometheus's base URL (default: the running platform's)",
    "ENGINE_ADDR_<GAME>": "an engine's host:port (default: the running platform's)",
    "GATEWAY_PORT": "the gateway's port (default 8000)",
    "ENGINE_PORT_<GAME>": "an engine's gRPC port (default 50051-50053)",
    "ENGINE_METRICS_PORT_<GAME>": "an engine's metrics port (default 9101-9103)",
    "WORKER_METRICS_PORT_<QUEUE>": "a worker's metrics port (default 9104-9106)",
    "PROMETHEUS_PORT": "Prometheus's port (default 9090)",
    "NIGHTLY_GAMES": "games per cell of every game of the nightly suite (default: each game's own)",
    "NIGHTLY_SEED": "the nightly suite's master seed (default 20240101)",
    "CULTISTS_PURE_PYTHON": "1 runs the engines' source instead of their compiled build",
    "CULTISTS_DEAL_SECRET": "the secret live tables' deal keys come from (default: the data folder's deal-secret)",
    "ENGINE_MAX_BOT_ITERATIONS": "the most IS-MCTS iterations one bot decision may ask this engine for (default 5000)",
    "ENGINE_MAX_BOT_MS": "the most milliseconds one bot decision may ask this engine for (default 5000)",
    "ENGINE_GRACE_SECONDS": "how long a draining engine lets calls finish before it stops their searches (default 5)",
    "COLUMNS": "the width tables are fitted to (default: the terminal's)",
}

EXIT_STATUS = (
    "exit status: 0 done; 1 done, but the result is a miss (see the command's help); "
    "2 bad input (a flag, file, record, spec or busy port), nothing changed; "
    "3 something needed is unreachable or not found (Redis, an engine, a running platform); "
    "130 interrupted"
)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written, and every option's default unless its help already says
    it or the default means "not given" (None, False, an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default is None
            or default is False
            or default == argparse.SUPPRESS
            or default == []
            or not action.option_strings
        ):
            return text
        return f"{text} (default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """Bad flags are one line (what is wrong and where to read more), exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise BadInput(f"{self.prog.removeprefix('cultists ')}: {message}; see `{self.prog} --help`")


def command(
    sub: argparse._SubParsersAction,
    name: str,
    summary: str,
    description: str | None = None,
    environment: Iterable[str] = (),
    miss: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand's parser: its one-line summary, a description, and under the options
    the environment variables it reads and what its exit status 1 means."""
    lines = []
    names = list(environment)
    if names:
        width = max(len(n) for n in names)
        lines.append("environment:")
        lines += [f"  {n:<{width}}  {ENVIRONMENT[n]}" for n in names]
    status = EXIT_STATUS.replace("(see the command's help)", f"({miss})") if miss else EXIT_STATUS
    lines.append(textwrap.fill(status, width=88, subsequent_indent="  "))
    return sub.add_parser(name, help=summary, description=description or summary, epilog="\n".join(lines))


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def add_jobs(
    parser: argparse.ArgumentParser, what: str = "local pool size", default: int | None = None
) -> None:
    """`-j/--jobs N` (N at least 1); `--processes` is its old, hidden spelling."""
    shown = "CPU count" if default is None else str(default)
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=default, metavar="N", help=f"{what} (default: {shown})"
    )
    parser.add_argument("--processes", dest="jobs", type=positive_int, help=argparse.SUPPRESS)


def add_redis_url(parser: argparse.ArgumentParser) -> None:
    """`--redis-url URL`; `--redis` is its old, hidden spelling."""
    parser.add_argument(
        "--redis-url",
        default=None,
        metavar="URL",
        help="the platform's Redis (default: $REDIS_URL, else the running `cultists run`'s)",
    )
    parser.add_argument("--redis", dest="redis_url", help=argparse.SUPPRESS)


def add_json(parser: argparse.ArgumentParser, what: str = "print the result as JSON on stdout") -> None:
    parser.add_argument("--json", action="store_true", help=what)


def add_wide(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wide",
        action="store_true",
        help="print every table column, however wide the terminal (default: fit it, see docs/cli.md)",
    )


def add_out(parser: argparse.ArgumentParser, folder: str) -> None:
    parser.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"report folder (default: {folder}/<id> in the data folder)",
    ).complete = DIRECTORY  # type: ignore[attr-defined]
