"""Ports: free ones for servers that tests and `cultists run` start, which are busy, and
what holds a busy one.

`check_ports` is what `cultists run` and `cultists serve` call before they start anything:
it tries to bind each port the way the servers do (SO_REUSEADDR, so a socket in TIME_WAIT
does not count as busy) and, for each it cannot bind, names the process listening there,
read from /proc (the kernel's socket table, then each process's open sockets). It takes
the list of ports to check, so a caller with more (a Redis Cluster's nodes) passes more.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import BadInput

_LISTEN = "0A"  # TCP_LISTEN in /proc/net/tcp's `st` column


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(port: int, host: str = "127.0.0.1", timeout: float = 15.0) -> None:
    """Block until something accepts connections on host:port, or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s") from None
            time.sleep(0.05)


def can_bind(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could bind host:port now (as gunicorn, gRPC and Redis do); an IPv6
    `host` is tried as IPv6."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class PortUse:
    """A port something will bind: which part binds it, and the variable that moves it."""

    part: str
    port: int
    variable: str | None = None


@dataclass(frozen=True)
class Busy:
    """A port that cannot be bound: who wanted it, and who holds it (in words)."""

    what: str
    port: int
    holder: str
    variable: str | None = None  # the setting that moves it, when there is one

    def sentence(self) -> str:
        return f"port {self.port} ({self.what}) is in use by {self.holder}"


class PortsBusy(BadInput):
    """One or more ports a command needs are taken; the message names each and its holder."""

    def __init__(self, busy: list[Busy], fix: str) -> None:
        self.busy = busy
        super().__init__(f"{'; '.join(b.sentence() for b in busy)}: {fix}")


def check_ports(wanted: Iterable[PortUse], host: str = "127.0.0.1") -> list[Busy]:
    """The ports of `wanted` that cannot be bound on `host`, each with what holds it;
    empty when all are free."""
    return [
        Busy(use.part, use.port, describe_holder(use.port), use.variable)
        for use in wanted
        if not can_bind(use.port, host)
    ]


def refuse_busy(busy: list[Busy], fix: str | None = None) -> None:
    """Raise PortsBusy for `busy` (no-op when empty); the fix names the variables that
    move the ports, unless the caller says another."""
    if not busy:
        return
    if fix is None:
        variables = [b.variable for b in busy if b.variable]
        fix = "stop what holds it" + (
            f", or move it with {', '.join(f'{v}=<port>' for v in variables)}" if variables else ""
        )
        if len(busy) > 1:
            fix = fix.replace("holds it", "holds them").replace("move it", "move them")
    raise PortsBusy(busy, fix)


def listening_inodes(port: int) -> set[int]:
    """Socket inodes listening on `port` (any address, IPv4 or IPv6), from /proc/net."""
    found: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                found.add(int(fields[9]))
    return found


def socket_owners(inodes: set[int], pids: Iterable[int] | None = None) -> list[int]:
    """PIDs (of `pids`, default every process we may read) holding any of `inodes`."""
    if not inodes:
        return []
    targets = {f"socket:[{i}]" for i in inodes}
    owners = []
    for pid in pids if pids is not None else _all_pids():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in targets:
                    owners.append(pid)
                    break
            except OSError:
                continue
    return owners


def session_of(pid: int) -> int | None:
    """The session id of `pid` (field 6 of /proc/PID/stat), None when it cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[3])


def session_members(sid: int) -> list[int]:
    """Every process whose session is `sid` (a supervised part and its children)."""
    return [pid for pid in _all_pids() if session_of(pid) == sid]


def describe_holder(port: int) -> str:
    """`pid 4242 (python3 -m http.server 8000)`, or what can be said without one."""
    inodes = listening_inodes(port)
    if not inodes:
        return "a socket that is bound but not listening (or outside this view of /proc)"
    owners = socket_owners(inodes)
    if not owners:
        return "a process this user cannot see (another user's, or another container's)"
    return ", ".join(f"pid {pid} ({command_line(pid)})" for pid in sorted(owners)[:3])


def command_line(pid: int, limit: int = 60) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    text = " ".join(part.decode(errors="replace") for part in raw.split(b"\0") if part) or "?"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
