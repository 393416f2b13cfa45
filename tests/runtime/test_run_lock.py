"""The data folder's lock: a second run is refused naming the holder's PID, and a killed
run's lock is taken over with its leftover processes stopped first (never two Redis
servers on one append-only file)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from services.runtime.run_lock import FolderLocked, RunLock, run_processes
from tests.runtime.test_supervisor import alive

ROOT = Path(__file__).resolve().parents[2]


def _holder(folder: Path, ready: Path) -> subprocess.Popen:
    """Another process that takes the lock and starts a child tagged with its run id."""
    script = textwrap.dedent(
        f"""
        import os, subprocess, sys, time
        from pathlib import Path
        from services.runtime.run_lock import RunLock
        lock = RunLock(Path({str(folder)!r}))
        lock.acquire()
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 env={{**os.environ, "CULTISTS_RUN_ID": lock.run_id}},
                                 start_new_session=True)
        Path({str(ready)!r}).write_text(f"{{lock.run_id}} {{child.pid}}")
        time.sleep(600)
        """
    )
    return subprocess.Popen([sys.executable, "-c", script], cwd=ROOT)


def _wait_file(path: Path, proc: subprocess.Popen) -> str:
    deadline = time.monotonic() + 30
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline and proc.poll() is None, "holder did not start"
        time.sleep(0.05)
    return path.read_text()


def test_a_second_run_is_refused_naming_the_holder(tmp_path):
    holder = _holder(tmp_path, tmp_path / "ready")
    try:
        _, child = _wait_file(tmp_path / "ready", holder).split()
        with pytest.raises(FolderLocked, match=f"pid {holder.pid}"):
            RunLock(tmp_path).acquire()
        assert alive(int(child))  # refusing touches nothing of the live run
    finally:
        holder.kill()
        holder.wait()
        RunLock(tmp_path).acquire()  # takes the lock over and stops the holder's child


def test_a_killed_runs_lock_is_taken_over_and_its_leftovers_stopped(tmp_path):
    holder = _holder(tmp_path, tmp_path / "ready")
    run_id, child = _wait_file(tmp_path / "ready", holder).split()
    holder.kill()  # kill -9: the lock file still names it, the kernel dropped the flock
    holder.wait()
    assert alive(int(child)) and run_processes(run_id) == [int(child)]
    lock = RunLock(tmp_path)
    try:
        assert lock.acquire() == [int(child)]
        assert not alive(int(child)) and lock.previous["pid"] == holder.pid
        with pytest.raises(FolderLocked, match="pid "):
            RunLock(tmp_path).acquire()  # the same process asking twice is refused too
    finally:
        lock.release()
    again = RunLock(tmp_path)
    assert again.acquire() == []  # released cleanly: nothing to take over
    again.release()
