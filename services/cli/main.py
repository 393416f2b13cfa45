"""`cultists`: the one command line for the platform.

Each subcommand lives in its own module and registers itself in COMMANDS below; this file
only wires argparse and runs the command inside one wrapper, the same for every
subcommand: an expected failure (failures.py: a bad flag, file, record or spec, a busy
port, Redis or an engine unreachable, no running platform) is one line on standard error
naming the cause and the fix, never a traceback, with a documented exit status:

    0  done
    1  done, but the result is a miss (a part down, a tune not confirmed, a sweep
       cancelled or failed, a night not stored): each command's help says which
    2  bad input: nothing was changed; fix what the line names and run it again
    3  unreachable or not found (Redis, an engine, a running platform): nothing was
       changed; run it again once that is up
    130 interrupted (Ctrl-C); 141 the reader of the output went away (`| head`)

docs/cli.md has the whole reference.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from importlib import metadata

from . import (
    admin_cmd,
    cards_cmd,
    completion_cmd,
    failures,
    ladder_cmd,
    nightly_cmd,
    replay_cmd,
    run_cmd,
    serve_cmd,
    simulate_cmd,
    status_cmd,
    sweep_cmd,
    train_cmd,
    tune_cmd,
)
from .options import EXIT_STATUS, Parser

# Every subcommand, in the order `cultists --help` lists them. A module here needs only a
# `register(sub)` that adds its parser with `set_defaults(func=...)`.
COMMANDS = [
    simulate_cmd,
    replay_cmd,
    ladder_cmd,
    serve_cmd,
    run_cmd,
    status_cmd,
    sweep_cmd,
    cards_cmd,
    train_cmd,
    tune_cmd,
    nightly_cmd,
    admin_cmd,
    completion_cmd,
]


def version() -> str:
    try:
        return metadata.version("cultists")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed: run `make install`)"


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="cultists",
        description="Host and balance-test the three cult card games. `cultists COMMAND --help` "
        "says what each command does, its defaults and the environment variables it reads.",
        epilog=EXIT_STATUS + ". See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"cultists {version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    for module in COMMANDS:
        module.register(sub)
    parser.set_defaults(root_parser=parser)  # for `cultists completion`, which writes it out
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        args = build_parser().parse_args(argv)
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe surfaces here, not in the interpreter's exit
        return status
    except SystemExit as exc:  # --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        return _reader_went_away()
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        found = failures.explain(exc)
        if found is None:
            raise
        status, line = found
        print(f"cultists: {line}", file=sys.stderr)
        return status


def _reader_went_away() -> int:
    """`cultists replay --steps | head`: the reader stopped reading, which is not an error.

    Python's advice for SIGPIPE: point stdout at /dev/null so the interpreter's final flush
    of what is still buffered cannot raise again, and exit quietly with the status a
    shell gives a command its pipe reader left (128 + SIGPIPE).
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 141


if __name__ == "__main__":
    sys.exit(main())
