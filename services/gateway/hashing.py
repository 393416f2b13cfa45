"""Password hashing for a gateway worker: in its own low-priority process, never on the loop.

Each gevent worker starts one hashing process on its first sign-in (services/platform/
passwords.py: a line of JSON in, a line out, a session of its own at lower priority) and
talks to it from one real thread, so a greenlet waiting for a hash leaves the hub free and
the hash itself takes only the CPU the event loops leave (why a lower-priority thread in
the worker was not enough: passwords.py). At most HASHING_ADMITTED sign-ins wait for it;
past that one is refused at once (503 `busy`, Retry-After) instead of queueing without end
behind a flood. The process ends when its worker does (its stdin closes); one that died is
started again on the next sign-in, and the sign-in that met it dead tries once more.

Without gevent (tests' threaded server, the CLI) hashing runs in the calling thread.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import orjson

from services.platform import passwords

from .offload import Busy, gevent_active

HASHING_ADMITTED = 4
RETRY_AFTER_SECONDS = 2
# Where `python -m services.platform.passwords` is found, however the gateway was started.
ROOT = Path(__file__).resolve().parents[2]


class HashingLost(Exception):
    """The hashing process went away mid-request (killed, out of memory)."""


class ProcessHasher:
    """passwords.Hasher over the worker's hashing process (see the module docstring)."""

    def __init__(self) -> None:
        self._admitted = threading.BoundedSemaphore(HASHING_ADMITTED)
        self._lock = threading.Lock()  # gevent's once patched: held to start the process
        self._pool: Any = None
        self._child: subprocess.Popen[bytes] | None = None
        self._owner = 0  # the pid that started the child: a forked copy starts its own
        self._to = self._from = -1
        self._buffer = b""

    def hash(self, password: str) -> str:
        return str(self._call({"op": "hash", "password": password}))

    def verify(self, digest: str, password: str) -> bool:
        return bool(self._call({"op": "verify", "digest": digest, "password": password}))

    @property
    def pid(self) -> int | None:
        """The hashing process's pid, once started (what tests look at)."""
        return self._child.pid if self._child is not None else None

    def _call(self, request: dict[str, str]) -> Any:
        if not gevent_active():
            return passwords.answer(request)["ok"]
        if not self._admitted.acquire(blocking=False):
            raise Busy(
                f"{HASHING_ADMITTED} sign-ins are already waiting for a password check here; try again shortly",
                retry_after=RETRY_AFTER_SECONDS,
            )
        try:
            line = orjson.dumps(request) + b"\n"
            for attempt in (1, 2):
                self._ensure_started()
                try:
                    reply = orjson.loads(self._pool.apply(self._exchange, (line,)))
                    break
                except HashingLost:
                    self._forget()
                    if attempt == 2:
                        raise
            if "error" in reply:  # only a bug of ours can get here: the requests are made above
                raise RuntimeError(f"hashing process: {reply['error']}")
            return reply["ok"]
        finally:
            self._admitted.release()

    def _ensure_started(self) -> None:
        with self._lock:
            if self._child is not None and self._owner == os.getpid() and self._child.poll() is None:
                return
            self._forget()
            if self._pool is None:
                from gevent.threadpool import ThreadPool

                self._pool = ThreadPool(1)  # one request at a time: one pipe, one answer
            to_child, self._to = os.pipe()
            self._from, from_child = os.pipe()
            path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
            try:
                self._child = subprocess.Popen(
                    [sys.executable, "-m", "services.platform.passwords"],
                    stdin=to_child,
                    stdout=from_child,
                    env={**os.environ, "PYTHONPATH": path},
                    start_new_session=True,  # its own scheduling group (passwords.py)
                )
            finally:
                os.close(to_child)
                os.close(from_child)
            self._owner = os.getpid()

    def _exchange(self, line: bytes) -> bytes:
        """One request and its reply, on the pool's real thread (blocking pipe I/O there
        leaves the hub alone)."""
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._to, view) :]
            while b"\n" not in self._buffer:
                chunk = os.read(self._from, 65536)
                if not chunk:
                    raise HashingLost("the hashing process closed its output")
                self._buffer += chunk
        except OSError as exc:  # BrokenPipeError: it died before reading
            raise HashingLost(str(exc)) from exc
        reply, _, self._buffer = self._buffer.partition(b"\n")
        return reply

    def _forget(self) -> None:
        """Close the pipes to a dead (or another process's) hashing process."""
        for fd in (self._to, self._from):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._to = self._from = -1
        self._buffer = b""
        if self._child is not None and self._owner == os.getpid() and self._child.poll() is None:
            self._child.kill()
        self._child = None
