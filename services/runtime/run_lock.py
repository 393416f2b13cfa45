"""The data folder's lock: one `cultists run` per folder, and a killed run's leftovers
stopped before a new one starts.

The lock is an `fcntl.flock` on `<data>/run.lock`, held by the supervisor for its whole
life. The kernel drops it when the holder dies, however it dies, so a lock can never be
left "held" by a dead run; the file's text (the holder's PID and run id) only says who
holds it now, or who held it last. So:

- flock refused: a live run holds the folder. Refuse at once, naming its PID, before
  anything (Redis above all) touches the folder's files.
- flock granted but the file names an earlier run: that run died without cleaning up
  (kill -9). Its children should have died with it (parent-death signal), but anything
  still carrying its CULTISTS_RUN_ID in its environment is killed and waited for, so a
  second Redis never opens the same append-only file while the first still writes it.
  Matching the run id, not a PID, is what makes the takeover safe: a PID reused by an
  unrelated process since then is never touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import time
import uuid
from pathlib import Path
from typing import IO

from .errors import BadInput


class FolderLocked(BadInput, RuntimeError):
    """Another live `cultists run` holds the data folder."""


class RunLock:
    def __init__(self, folder: Path) -> None:
        self.path = folder / "run.lock"
        self.run_id = uuid.uuid4().hex
        self._file: IO[str] | None = None
        self.previous: dict = {}

    def acquire(self) -> list[int]:
        """Take the lock or raise FolderLocked; returns the PIDs of a dead run's leftovers
        that were killed (empty when the last run ended cleanly)."""
        handle = open(self.path, "a+")  # noqa: SIM115 - held open for the run's life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = _parse(handle.read()).get("pid", "?")
            handle.close()
            raise FolderLocked(
                f"another `cultists run` (pid {holder}) is using {self.path.parent}; "
                "stop it first, or set CULTISTS_DATA to another folder"
            ) from None
        handle.seek(0)
        self.previous = _parse(handle.read())
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "run_id": self.run_id}))
        handle.flush()
        self._file = handle
        old = self.previous.get("run_id")
        return kill_run(old) if old else []

    def release(self) -> None:
        if self._file is not None:
            self._file.seek(0)
            self._file.truncate()
            self._file.flush()
            fcntl.flock(self._file, fcntl.LOCK_UN)
            self._file.close()
            self._file = None


def _parse(text: str) -> dict:
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def run_processes(run_id: str) -> list[int]:
    """PIDs of live processes whose environment says they belong to run `run_id`."""
    marker = f"CULTISTS_RUN_ID={run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:  # gone, or not ours to read (then not ours to kill either)
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def kill_run(run_id: str, timeout: float = 10.0) -> list[int]:
    """SIGKILL every process of a dead run and wait until they are gone."""
    pids = run_processes(run_id)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    return pids


def _alive(pid: int) -> bool:
    """Alive and not a zombie (a killed orphan is a zombie until init reaps it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
