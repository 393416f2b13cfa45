"""The platform's data folder, found the same way from any working directory.

Everything the platform and the command line write lives under one folder: the embedded
Redis's append-only file, Prometheus's data, the beat schedule, stored nights, per-game
records, sweep and tune reports, and the run file (`run.json`, the addresses a running
`cultists run` chose). Which folder:

1. `CULTISTS_DATA`, when it is set (docker-compose and Kubernetes set it to a volume);
2. else the folder of the `cultists run` that is running for this user, wherever it was
   started and whatever folder it was given: every run registers itself while it runs in
   the per-user default's `runs/` (two running at once, from different folders, is
   ambiguous: `AmbiguousDataFolder` asks for CULTISTS_DATA);
3. else the per-user default, `$XDG_DATA_HOME/cultists` (`~/.local/share/cultists`).

A folder never depends on the working directory, so `cultists status` in another terminal
finds the platform `make run` started, and nothing ever creates a `./var` by surprise.
Reading is side-effect free: only `ensure_data_dir` (called by whoever writes) creates it.

A run counts as running while it holds its folder's lock (services/runtime/run_lock.py);
the kernel drops that lock when the run dies however it dies, so a killed run's stale
registration or run file is never taken for a running platform.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .errors import BadInput

RUN_FILE = "run.json"
LOCK_FILE = "run.lock"
REGISTRY = "runs"


class AmbiguousDataFolder(BadInput, LookupError):
    """Several `cultists run` are running from different folders and none was named."""


def user_data_dir() -> Path:
    """The per-user default: $XDG_DATA_HOME/cultists, else ~/.local/share/cultists."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser().resolve() / "cultists"


def explicit_data_dir() -> Path | None:
    """CULTISTS_DATA, resolved, when it is set."""
    given = os.environ.get("CULTISTS_DATA")
    return Path(given).expanduser().resolve() if given else None


def data_dir() -> Path:
    """The data folder (see the module doc for the order); not created here."""
    explicit = explicit_data_dir()
    if explicit is not None:
        return explicit
    running = running_folders()
    if len(running) > 1:
        listed = ", ".join(str(f) for f in running)
        raise AmbiguousDataFolder(
            f"several platforms are running ({listed}); set CULTISTS_DATA to the one you mean"
        )
    return running[0] if running else user_data_dir()


def ensure_data_dir() -> Path:
    """The data folder, created if it is not there yet (for whoever writes into it)."""
    path = data_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


def run_file() -> Path:
    """Written by `cultists run` once its platform is up: the addresses it chose (the
    embedded Redis port is free-picked), so clients find them without being told."""
    return data_dir() / RUN_FILE


def is_running(folder: Path) -> bool:
    """Whether a live `cultists run` holds `folder`'s lock (never creates the lock file)."""
    try:
        handle = open(folder / LOCK_FILE)  # noqa: SIM115 - closed below, whatever happens
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def read_run_file(folder: Path | None = None) -> dict[str, Any]:
    """The running platform's facts, or {} when none runs there (a run file left by a
    killed run is stale: its lock is gone, so it is not read)."""
    folder = data_dir() if folder is None else folder
    if not is_running(folder):
        return {}
    try:
        found = json.loads((folder / RUN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _registry() -> Path:
    return user_data_dir() / REGISTRY


def register_run(folder: Path) -> Path:
    """Note in the per-user registry that a run holds `folder` (called with its lock
    held); `unregister_run` removes it, and a dead run's entry is ignored and swept."""
    entry = _registry() / f"{hashlib.sha1(str(folder).encode()).hexdigest()[:16]}.json"  # one per folder
    entry.parent.mkdir(parents=True, exist_ok=True)
    entry.write_text(json.dumps({"data": str(folder), "pid": os.getpid()}))
    return entry


def unregister_run(entry: Path) -> None:
    entry.unlink(missing_ok=True)


def running_folders() -> list[Path]:
    """The data folders of this user's running `cultists run`s, oldest registration first."""
    registry = _registry()
    if not registry.is_dir():
        return []
    found: list[Path] = []
    for entry in sorted(registry.glob("*.json"), key=_mtime):
        try:
            folder = Path(json.loads(entry.read_text())["data"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if is_running(folder):
            if folder not in found:
                found.append(folder)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()  # a run killed before it could remove its entry
    return found


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
