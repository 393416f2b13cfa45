"""`cultists`: the one command line for the platform.

Each subcommand lives in its own module and registers itself here; this file only wires
argparse and turns the library's errors into a one-line message and exit status 2, and
an unreachable Redis or Celery broker into a one-line message and exit status 3 (never a
traceback: the command changed nothing, and running it again once Redis is back works).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from services.engines.core.errors import EngineError

from . import (
    ladder_cmd,
    nightly_cmd,
    replay_cmd,
    run_cmd,
    serve_cmd,
    simulate_cmd,
    status_cmd,
    sweep_cmd,
    tune_cmd,
)

COMMANDS = [
    simulate_cmd,
    replay_cmd,
    serve_cmd,
    run_cmd,
    sweep_cmd,
    nightly_cmd,
    tune_cmd,
    status_cmd,
    ladder_cmd,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cultists", description="Host and balance-test the three cult card games."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    try:
        status = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe surfaces here, not in the interpreter's exit
        return status
    except BrokenPipeError:
        return _reader_went_away()
    except EngineError as exc:
        print(f"cultists: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if not _store_unreachable(exc):
            raise
        print(f"cultists: Redis is unreachable ({_first_line(exc)}); is it running? "
              "(`cultists status` checks every part)", file=sys.stderr)  # fmt: skip
        return 3


def _store_unreachable(exc: BaseException) -> bool:
    """Redis down, as redis-py or Celery's kombu reports it (imported lazily: most
    commands never load Celery)."""
    import redis

    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return True
    kombu = sys.modules.get("kombu.exceptions")
    return kombu is not None and isinstance(exc, kombu.OperationalError)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


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
