"""Every failure `cultists` expects, as one line and an exit status.

`explain(exc)` is the one place that decides what a failure reads like. Any subcommand,
whoever adds it, gets this for free: main.py calls it around every command. What is not
recognised here is a bug, and keeps its traceback.

- 2, bad input: the library's own refusals (a bad config, record or action:
  `EngineError`), the CLI's and runtime's `BadInput` (a bad flag, a busy port, a data
  folder another run holds), and a file that cannot be opened (missing, a folder,
  unreadable).
- 3, unreachable: Redis or the Celery broker down (redis-py's and kombu's errors), an
  engine that does not answer (gRPC UNAVAILABLE or DEADLINE_EXCEEDED), no running
  platform to talk to (`Unreachable`).
"""

from __future__ import annotations

import errno
import sys

from services.engines.core.errors import EngineError
from services.runtime.errors import BAD_INPUT, UNREACHABLE, CommandError

_FILE_FIXES = {
    FileNotFoundError: "check the path",
    IsADirectoryError: "name a file, not a folder",
    NotADirectoryError: "check the path: a part of it is a file",
    PermissionError: "check its permissions",
}


def explain(exc: BaseException) -> tuple[int, str] | None:
    """(exit status, one line) for an expected failure; None for anything else (a bug)."""
    if isinstance(exc, CommandError):
        return exc.status, _one_line(exc)
    if isinstance(exc, EngineError):
        return BAD_INPUT, _one_line(exc)
    if isinstance(exc, OSError) and exc.filename is not None:
        for kind, fix in _FILE_FIXES.items():
            if isinstance(exc, kind):
                reason = (exc.strerror or type(exc).__name__).lower()
                return BAD_INPUT, f"cannot open {exc.filename}: {reason}; {fix}"
    if isinstance(exc, OSError) and exc.errno == errno.EADDRINUSE:
        return BAD_INPUT, f"{_one_line(exc)}: a port is taken; stop what holds it or pick another port"
    if _store_unreachable(exc):
        return UNREACHABLE, (
            f"Redis is unreachable ({_one_line(exc)}); is it running? (`cultists status` checks every part)"
        )
    engine = _engine_unreachable(exc)
    if engine is not None:
        return UNREACHABLE, engine
    return None


def _store_unreachable(exc: BaseException) -> bool:
    """Redis down, as redis-py or Celery's kombu reports it (looked up, not imported:
    most commands never load them)."""
    redis = sys.modules.get("redis")
    if redis is not None and isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return True
    kombu = sys.modules.get("kombu.exceptions")
    return kombu is not None and isinstance(exc, kombu.OperationalError)


def _engine_unreachable(exc: BaseException) -> str | None:
    grpc = sys.modules.get("grpc")
    if grpc is None or not isinstance(exc, grpc.RpcError):
        return None
    code = exc.code() if hasattr(exc, "code") else None
    if code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return None
    details = exc.details() if hasattr(exc, "details") else ""
    return (
        f"an engine does not answer ({code.name}: {_first(details or '')}); is the platform up? "
        "(`cultists status` checks every part)"
    )


def _one_line(exc: BaseException) -> str:
    return _first(str(exc)) or type(exc).__name__


def _first(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0] if text else ""
