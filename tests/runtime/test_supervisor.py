"""The supervisor heals: a dead child comes back after a back-off with its exit logged, a
child that keeps failing is given up on while the rest keeps running, a dead child's own
children go with it, and no child outlives a supervisor killed with SIGKILL.

Real processes throughout (small `python -c` programs); every wait polls with a generous
bound, so a loaded machine only makes the tests slower, never wrong.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from services.runtime.supervisor import ProcessSpec, Supervisor

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def heal_until(sup: Supervisor, predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        sup.check()
        time.sleep(0.05)


def test_a_killed_child_is_restarted_and_the_exit_logged(capsys):
    sup = Supervisor(backoff=0.1)
    try:
        first = sup.start(ProcessSpec("sleeper", SLEEPER))
        other = sup.start(ProcessSpec("other", SLEEPER))
        os.kill(first.pid, signal.SIGKILL)
        part = sup.part("sleeper")
        heal_until(sup, lambda: part.proc.pid != first.pid and part.state() == "running")
        assert part.restarts == 1 and part.last_exit == -signal.SIGKILL
        assert part.proc.poll() is None and other.poll() is None  # the rest never stopped
        out = capsys.readouterr().out
        assert "sleeper exited with signal SIGKILL" in out and "restarting sleeper (restart 1)" in out
        summary = part.summary()
        assert summary["restarts"] == 1 and summary["state"] == "running" and summary["pid"] == part.proc.pid
    finally:
        sup.stop_all(timeout=5)
    assert not alive(part.proc.pid) and not alive(other.pid)


def test_back_off_doubles_and_a_crash_loop_is_given_up(capsys):
    crash = [sys.executable, "-c", "import sys; sys.exit(3)"]
    sup = Supervisor(backoff=0.2, backoff_cap=0.4, max_failures=3, window=60)
    try:
        keeper = sup.start(ProcessSpec("keeper", SLEEPER))
        sup.start(ProcessSpec("crasher", crash))
        part = sup.part("crasher")
        heal_until(sup, lambda: part.gave_up)
        assert part.restarts == 3 and part.last_exit == 3 and part.state() == "gave up"
        out = capsys.readouterr().out
        delays = [line.rsplit("restarting in ", 1)[1] for line in out.splitlines() if "restarting in" in line]
        assert delays == ["0.2s", "0.4s", "0.4s"], out  # doubled, then capped
        assert "exit code 3" in out and "GIVING UP on it" in out
        assert keeper.poll() is None  # one broken part does not stop the others
        time.sleep(0.5)
        sup.check()
        assert part.restarts == 3  # given up means no more restarts
    finally:
        sup.stop_all(timeout=5)


def test_a_dead_childs_own_children_die_with_it():
    # A master that forks a worker, like gunicorn or a Celery worker: the worker would keep
    # the master's port or queue if it survived the master.
    master = textwrap.dedent(
        """
        import subprocess, sys, time
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        time.sleep(600)
        """
    )
    sup = Supervisor(backoff=0.1)
    try:
        proc = sup.start(ProcessSpec("master", [sys.executable, "-c", master]))
        worker_pid = _first_child(proc.pid)
        assert alive(worker_pid)
        os.kill(proc.pid, signal.SIGKILL)
        part = sup.part("master")
        heal_until(sup, lambda: part.restarts == 1)
        deadline = time.monotonic() + 10
        while alive(worker_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(worker_pid)
    finally:
        sup.stop_all(timeout=5)


def _first_child(pid: int) -> int:
    """The first process `pid` forked, once it has."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    deadline = time.monotonic() + 30
    while not children.read_text().split():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    return int(children.read_text().split()[0])


def test_no_child_outlives_a_killed_supervisor(tmp_path):
    script = textwrap.dedent(
        f"""
        from services.runtime.supervisor import ProcessSpec, Supervisor
        sup = Supervisor()
        for name in ("a", "b"):
            sup.start(ProcessSpec(name, {SLEEPER!r}))
        open({str(tmp_path / "pids")!r}, "w").write(" ".join(str(p.proc.pid) for p in sup.parts))
        sup.wait()
        """
    )
    runner = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2])
    pids_file = tmp_path / "pids"
    deadline = time.monotonic() + 30
    while not pids_file.exists() or not pids_file.read_text():
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.05)
    children = [int(p) for p in pids_file.read_text().split()]
    assert all(alive(p) for p in children)
    runner.kill()
    runner.wait()
    deadline = time.monotonic() + 10
    while any(alive(p) for p in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in children)
