"""Run several processes as one: prefixed logs, stop all on Ctrl-C or when one dies.

What `cultists run` (and so `make run`) uses to bring the platform up as plain processes.
A child that exits on its own takes the others down with it, so a half-running platform
never looks healthy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

COLOURS = ["36", "33", "35", "32", "34", "31", "96", "93"]


@dataclass
class ProcessSpec:
    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


class Supervisor:
    def __init__(self) -> None:
        self.children: list[tuple[ProcessSpec, subprocess.Popen]] = []
        self._width = 8
        self._out_lock = threading.Lock()

    def say(self, name: str, line: str, colour: str = "1") -> None:
        prefix = f"{name:<{self._width}}"
        if sys.stdout.isatty():
            prefix = f"\033[{colour}m{prefix}\033[0m"
        with self._out_lock:
            sys.stdout.write(f"{prefix} | {line}\n")
            sys.stdout.flush()

    def start(self, spec: ProcessSpec) -> subprocess.Popen:
        self._width = max(self._width, len(spec.name))
        colour = COLOURS[len(self.children) % len(COLOURS)]
        proc = subprocess.Popen(
            spec.argv,
            env={**os.environ, **spec.env, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches us only; we stop children in order
        )
        self.children.append((spec, proc))
        threading.Thread(target=self._pump, args=(spec.name, proc, colour), daemon=True).start()
        return proc

    def _pump(self, name: str, proc: subprocess.Popen, colour: str) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            self.say(name, raw.decode(errors="replace").rstrip(), colour)

    def wait(self) -> int:
        """Block until a signal or a child exits; then stop everything. Returns exit code."""
        code = 0
        signalled: list[int] = []
        # The handler only appends to a list: an Event.set() from a signal handler can
        # deadlock on the lock the interrupted Event.wait() holds.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda signum, _frame: signalled.append(signum))
        while not signalled:
            exited = [(spec, proc) for spec, proc in self.children if proc.poll() is not None]
            if exited:
                spec, proc = exited[0]
                self.say("run", f"{spec.name} exited with {proc.returncode}; stopping everything")
                code = proc.returncode or 1
                break
            time.sleep(0.2)
        self.stop_all()
        return code

    def stop_all(self, timeout: float = 15.0) -> None:
        for spec, proc in reversed(self.children):
            if proc.poll() is None:
                self.say("run", f"stopping {spec.name}")
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for spec, proc in reversed(self.children):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say("run", f"{spec.name} did not stop in time; killing it")
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
