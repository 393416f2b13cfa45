"""Run several processes as one: prefixed logs, restart what dies, stop all on Ctrl-C.

What `cultists run` (and so `make run`) uses to bring the platform up as plain processes.

A child that exits on its own is restarted after a back-off that doubles with each
failure in a row (0.5 s, 1 s, 2 s, ... up to a cap), so a part that crashes once comes
back at once and one that crashes in a loop does not spin. A part that keeps failing
(more than `max_failures` exits within `window` seconds) is given up on: the supervisor
says so loudly and keeps the rest running, since one broken engine should not take the
other games down. Each restart is logged with the exit code or signal.

Children cannot outlive the supervisor: each runs in its own process group (so a Ctrl-C
in the terminal reaches only us, and we stop children in order), and is started with
the kernel's parent-death signal (PR_SET_PDEATHSIG), so a `kill -9` of the supervisor
kills them too. Their own children (gunicorn and Celery pool processes) go with their
group: before a part is restarted its whole group is killed, so a dead master's
orphaned workers never hold its port or its queue. Every child also carries
CULTISTS_RUN_ID in its environment, which lets the next run find and stop anything a
killed run left behind (see `services.runtime.run_lock`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import BadInput
from .ports import describe_holder, listening_inodes, session_members, socket_owners, wait_for_port

COLOURS = ["36", "33", "35", "32", "34", "31", "96", "93"]
_PR_SET_PDEATHSIG = 1


@dataclass
class ProcessSpec:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    # Stopped only after every other part has exited (Redis: the others flush into it).
    stop_last: bool = False
    # Known alarming lines and what they mean here: a line holding a key is printed as
    # its one-line explanation instead (Redis's overcommit WARNING, embedded_redis.py).
    notes: dict[str, str] = field(default_factory=dict)


@dataclass
class Part:
    """One supervised process and its history (what `cultists status` shows)."""

    spec: ProcessSpec
    colour: str
    proc: subprocess.Popen | None = None
    started_at: float = 0.0  # wall clock, for status
    started_mono: float = 0.0
    restarts: int = 0
    failures: deque[float] = field(default_factory=deque)  # monotonic times of recent exits
    streak: int = 0  # failures since it last ran `stable_after` seconds
    restart_at: float | None = None  # monotonic time of the pending restart
    gave_up: bool = False
    last_exit: int | None = None

    def state(self) -> str:
        if self.gave_up:
            return "gave up"
        if self.restart_at is not None:
            return "restarting"
        return "running"

    def summary(self) -> dict[str, Any]:
        return {
            "pid": self.proc.pid if self.proc is not None else None,
            "state": self.state(),
            "restarts": self.restarts,
            "started_at": self.started_at,
            "last_exit": self.last_exit,
        }


def describe_exit(code: int) -> str:
    """`exit code 3` or `signal SIGKILL`: Popen reports death by signal N as -N."""
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl, looked up here in the parent: the child between fork and exec must
    not dlopen (another thread may have held the loader's lock at the fork)."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):  # not Linux: the run lock's orphan sweep still applies
        return None


_PRCTL = _load_prctl()


def _die_with_parent() -> None:
    """Runs in the child between fork and exec: SIGKILL it when the supervisor dies.
    (The signal follows the thread that forked it; the supervisor forks from its main
    thread, which lives as long as the supervisor.)"""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class Supervisor:
    def __init__(
        self,
        *,
        run_id: str = "",
        backoff: float = 0.5,
        backoff_cap: float = 30.0,
        max_failures: int = 5,
        window: float = 60.0,
        stable_after: float = 10.0,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.parts: list[Part] = []
        self.run_id = run_id
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.max_failures = max_failures
        self.window = window
        self.stable_after = stable_after
        self.on_change = on_change
        self._width = 8
        self._out_lock = threading.Lock()
        self._stopping = False

    # -- output --------------------------------------------------------------------------
    def say(self, name: str, line: str, colour: str = "1") -> None:
        prefix = f"{name:<{self._width}}"
        if sys.stdout.isatty():
            prefix = f"\033[{colour}m{prefix}\033[0m"
        with self._out_lock:
            sys.stdout.write(f"{prefix} | {line}\n")
            sys.stdout.flush()

    def _pump(self, name: str, proc: subprocess.Popen, colour: str, notes: dict[str, str]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            note = next((text for key, text in notes.items() if key in line), None)
            self.say(name, line if note is None else note, colour)

    # -- starting ------------------------------------------------------------------------
    def start(self, spec: ProcessSpec) -> subprocess.Popen:
        """Start a new part; it is watched from then on by `wait`."""
        self._width = max(self._width, len(spec.name))
        part = Part(spec, COLOURS[len(self.parts) % len(COLOURS)])
        self.parts.append(part)
        self._spawn(part)
        return part.proc  # type: ignore[return-value]

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.spec.name == name)

    def _spawn(self, part: Part) -> None:
        env = {**os.environ, **part.spec.env, "PYTHONUNBUFFERED": "1"}
        if self.run_id:
            env["CULTISTS_RUN_ID"] = self.run_id
        part.proc = subprocess.Popen(
            part.spec.argv,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us only; we stop children in order
            preexec_fn=_die_with_parent,
        )
        part.started_at = time.time()
        part.started_mono = time.monotonic()
        part.restart_at = None
        threading.Thread(
            target=self._pump, args=(part.spec.name, part.proc, part.colour, part.spec.notes), daemon=True
        ).start()
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except OSError as exc:
                self.say("run", f"could not record the run's state: {exc}")

    # -- healing -------------------------------------------------------------------------
    def check(self) -> None:
        """One pass: notice exits, schedule restarts with back-off, start the due ones."""
        now = time.monotonic()
        for part in self.parts:
            proc = part.proc
            if part.gave_up or proc is None:
                continue
            if part.restart_at is None and proc.poll() is not None:
                self._exited(part, proc.returncode, now)
            elif part.restart_at is not None and now >= part.restart_at and not self._stopping:
                part.restarts += 1
                self.say("run", f"restarting {part.spec.name} (restart {part.restarts})")
                self._spawn(part)

    def _exited(self, part: Part, code: int, now: float) -> None:
        assert part.proc is not None
        ran = now - part.started_mono
        part.last_exit = code
        _kill_group(part.proc.pid)  # its orphaned workers must not hold its port or queue
        part.failures.append(now)
        while part.failures and part.failures[0] < now - self.window:
            part.failures.popleft()
        part.streak = 1 if ran >= self.stable_after else part.streak + 1
        how = describe_exit(code)
        if len(part.failures) > self.max_failures:
            part.gave_up = True
            self.say(
                "run",
                f"!!! {part.spec.name} exited with {how}: {len(part.failures)} failures in "
                f"{self.window:.0f}s; GIVING UP on it. The rest keeps running; "
                "fix it and restart `cultists run`.",
            )
        else:
            delay = min(self.backoff_cap, self.backoff * 2 ** (part.streak - 1))
            part.restart_at = now + delay
            self.say(
                "run",
                f"{part.spec.name} exited with {how} after {ran:.1f}s; restarting in {delay:.1f}s",
            )
        self._changed()

    def wait_until_listening(self, name: str, port: int, timeout: float = 60.0) -> None:
        """Wait for part `name` to accept connections on `port` (see `wait_until`).

        Something answering on the port is not enough: it must be the part itself (or one
        of its children). When another process holds the port, the part cannot bind it
        and never will, so that is said at once (PortTaken, naming the holder) instead of
        waiting out the timeout and then blaming a health check.
        """

        def listening() -> bool:
            try:
                wait_for_port(port, timeout=0.2)
            except TimeoutError:
                return False
            holder = self.foreign_listener(name, port)
            if holder is not None:
                raise PortTaken(f"{name} cannot bind port {port}: it is in use by {holder}")
            return True

        self.wait_until(name, listening, f"listening on port {port}", timeout)

    def foreign_listener(self, name: str, port: int) -> str | None:
        """Who listens on `port` when it is not part `name` (its session: the part and its
        children), in words; None when it is the part, or when /proc cannot tell."""
        inodes = listening_inodes(port)
        proc = self.part(name).proc
        if not inodes or proc is None:
            return None
        if socket_owners(inodes, session_members(proc.pid)):
            return None
        return describe_holder(port)

    def wait_until(self, name: str, ready: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
        """Wait for part `name` to be `ready()`, healing meanwhile (a part that crashes
        while starting is restarted, not waited on for the whole timeout)."""
        deadline = time.monotonic() + timeout
        while True:
            self.check()
            if self.part(name).gave_up:
                raise RuntimeError(f"{name} keeps failing to start; see its lines above")
            if ready():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} is not {what} after {timeout:.0f}s")
            time.sleep(0.1)

    def wait(self) -> int:
        """Block until SIGINT/SIGTERM, healing children meanwhile; then stop everything."""
        signalled: list[int] = []
        # The handler only appends to a list: an Event.set() from a signal handler can
        # deadlock on the lock the interrupted Event.wait() holds.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: signalled.append(signum))
        while not signalled:
            self.check()
            time.sleep(0.2)
        self.stop_all()
        return 0

    # -- stopping ------------------------------------------------------------------------
    def stop_all(self, timeout: float = 15.0) -> None:
        """SIGTERM in reverse start order, then SIGKILL each group that is still there;
        parts marked `stop_last` only once the others are gone."""
        self._stopping = True
        live = [p for p in reversed(self.parts) if p.proc is not None]
        self._stop([p for p in live if not p.spec.stop_last], timeout)
        self._stop([p for p in live if p.spec.stop_last], timeout)

    def _stop(self, live: list[Part], timeout: float) -> None:
        for part in live:
            assert part.proc is not None  # stop_all passes started parts only
            if part.proc.poll() is None:
                self.say("run", f"stopping {part.spec.name}")
                part.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for part in live:
            assert part.proc is not None
            try:
                part.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say("run", f"{part.spec.name} did not stop in time; killing it")
            _kill_group(part.proc.pid)
            part.proc.wait()


class PortTaken(BadInput):
    """A part cannot listen on its port because another process holds it."""


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
