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
import signal
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


class _Channel:
    """One hashing process and the worker's ends of its two pipes. Only the pool's one
    thread reads, writes and closes the pipes, so a channel found broken is closed there,
    never under an exchange still using it (a closed descriptor's number is soon reused by
    another socket of the worker, which a late write would then corrupt)."""

    def __init__(self) -> None:
        to_child, self.to = os.pipe()
        self.source, from_child = os.pipe()
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        try:
            # posix_spawn, not subprocess: gevent's Popen is patched in, and its handling of
            # descriptors handed in differs; this is the plain system call.
            self.pid = os.posix_spawn(
                sys.executable,
                [sys.executable, "-m", "services.platform.passwords"],
                {**os.environ, "PYTHONPATH": path},
                file_actions=[(os.POSIX_SPAWN_DUP2, to_child, 0), (os.POSIX_SPAWN_DUP2, from_child, 1)],
                setsid=True,  # its own scheduling group (passwords.py)
            )
        finally:
            os.close(to_child)
            os.close(from_child)
        self.owner = os.getpid()  # a forked copy of the worker starts its own
        self.buffer = b""
        self.broken = False

    def alive(self) -> bool:
        if self.broken or self.owner != os.getpid():
            return False
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:  # reaped by someone else: gone
            return False

    def exchange(self, line: bytes) -> bytes:
        """One request and its reply, on the pool's thread (blocking pipe I/O there leaves
        the hub alone). A broken channel is closed here and raises HashingLost."""
        if self.broken:
            raise HashingLost("the hashing process is gone")
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self.to, view) :]
            while b"\n" not in self.buffer:
                chunk = os.read(self.source, 65536)
                if not chunk:
                    raise HashingLost("the hashing process closed its output")
                self.buffer += chunk
        except HashingLost:
            self._close()
            raise
        except OSError as exc:  # BrokenPipeError: it died before reading
            self._close()
            raise HashingLost(str(exc)) from exc
        reply, _, self.buffer = self.buffer.partition(b"\n")
        return reply

    def _close(self) -> None:
        self.broken = True
        for fd in (self.to, self.source):
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.owner == os.getpid():
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, os.WNOHANG)

    def close(self, pool: Any) -> None:
        """Close it on the pool's thread, after any exchange queued there before."""
        if not self.broken:
            pool.apply(self._close)


class ProcessHasher:
    """passwords.Hasher over the worker's hashing process (see the module docstring)."""

    def __init__(self) -> None:
        self._admitted = threading.BoundedSemaphore(HASHING_ADMITTED)
        self._lock = threading.Lock()  # gevent's once patched: held to start the process
        self._pool: Any = None
        self._channel: _Channel | None = None

    def hash(self, password: str) -> str:
        return str(self._call({"op": "hash", "password": password}))

    def verify(self, digest: str, password: str) -> bool:
        return bool(self._call({"op": "verify", "digest": digest, "password": password}))

    @property
    def pid(self) -> int | None:
        """The hashing process's pid, once started (what tests look at)."""
        return self._channel.pid if self._channel is not None else None

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
                channel = self._current()
                try:
                    reply = orjson.loads(self._pool.apply(channel.exchange, (line,)))
                    break
                except HashingLost:
                    if attempt == 2:
                        raise
            if "error" in reply:  # only a bug of ours can get here: the requests are made above
                raise RuntimeError(f"hashing process: {reply['error']}")
            return reply["ok"]
        finally:
            self._admitted.release()

    def _current(self) -> _Channel:
        """The live channel, a new hashing process started when there is none."""
        with self._lock:
            if self._pool is None:
                from gevent.threadpool import ThreadPool

                self._pool = ThreadPool(1)  # one request at a time: one pipe, one answer
            channel = self._channel
            if channel is None or not channel.alive():
                if channel is not None and channel.owner == os.getpid():
                    channel.close(self._pool)
                channel = self._channel = _Channel()
            return channel
