"""Argon2id password hashes (argon2-cffi), and the small process a gateway worker hashes in.

A hash or a verification costs ~150 ms of CPU and 64 MiB by design, which is what makes
guessing expensive, and also what a flood of bad sign-ins turns against everyone else.
The gateway therefore never hashes in its own process: each worker starts one *hashing
process* (`python -m services.platform.passwords`, driven by services/gateway/hashing.py)
that reads one request a line on stdin and answers one a line on stdout. The process runs
in a session of its own at a lower niceness (HASHING_NICE), so the kernel hands the cores
to the gateway's event loops the moment they have a request, and hashing gets what is left.
And however many workers a host runs, at most HASHING_SLOTS hashes (one less than the
cores) run on it at once (`hashing_slot`, lock files every hashing process shares), and the
process runs only on HASHING_SLOTS of the cores it may use (`confine`), so a flood of
sign-ins never has every core, whatever the scheduler makes of niceness. The slots alone
did not bound that: argon2-cffi verifies with as many threads as the hash has lanes (4),
so one hash ran on both cores of a 2-core host and the event loops met it on either
(bench `logins`: 2.14x before, docs/security.md).

A lower-priority *thread* inside the worker was not enough (bench `logins`, docs/security.md):
where the kernel groups a session's threads and weighs the group against other sessions
(Linux autogroup), a busy hashing thread used up its worker's share, and the loop waited
for the group's next turn. In its own session the hashing is weighed on its own, and the
loop's mostly idle group wins each wakeup. That group keeps the usual weight (its
niceness is not lowered too): at a lower one, on a host busy with other sessions'
work, sign-ins starved outright (none answered in a bench run at a load average of 16).
Where scheduling goes by cgroup (a container) the process's niceness is what counts.

    request  {"op": "hash", "password": ...}             reply {"ok": "<argon2 hash>"}
             {"op": "verify", "digest": ..., "password": ...}   {"ok": true|false}
    anything else                                        {"error": "<what was wrong>"}
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import IO, Any, Protocol

import orjson
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# argon2-cffi's defaults (RFC 9106's second recommendation: 3 passes over 64 MiB, 4 lanes).
HASHER = PasswordHasher()
# The hashing process's niceness (0 normal, 19 lowest): low enough that requests always
# come first, not so low that a sign-in on a machine busy with other work never finishes.
HASHING_NICE = 10
# Hashes at once on this host, over every gateway worker's hashing process: one less than
# the cores (at least one), so a flood of sign-ins always leaves a core to the event loops
# whatever their niceness. Each slot is a lock file (flock) in HASHING_SLOTS_DIR, which a
# host's (or a pod's) processes share; a process that dies lets go of its slot with it.
HASHING_SLOTS = int(os.environ.get("GATEWAY_HASHING_SLOTS", "0")) or max(1, (os.cpu_count() or 1) - 1)
HASHING_SLOTS_DIR = os.environ.get("GATEWAY_HASHING_SLOTS_DIR") or os.path.join(
    tempfile.gettempdir(), f"cultists-hashing-slots-{os.getuid()}"
)


def hash_password(password: str) -> str:
    return HASHER.hash(password)


def verify_password(digest: str, password: str) -> bool:
    """Whether `password` matches `digest`; False for a wrong one or a malformed digest."""
    try:
        return HASHER.verify(digest, password)
    except (VerificationError, InvalidHashError):
        return False


class Hasher(Protocol):
    """Where a PlayerBook hashes: in the calling thread (LocalHasher) or in the gateway
    worker's hashing process (services/gateway/hashing.py)."""

    def hash(self, password: str) -> str: ...

    def verify(self, digest: str, password: str) -> bool: ...


class LocalHasher:
    """Hashing in the calling thread: the CLI, a Celery worker, tests' threaded server."""

    def hash(self, password: str) -> str:
        return hash_password(password)

    def verify(self, digest: str, password: str) -> bool:
        return verify_password(digest, password)


def answer(request: Any) -> dict[str, Any]:
    """The reply to one decoded request line."""
    if not isinstance(request, dict) or not isinstance(request.get("password"), str):
        return {"error": "a request is an object with a 'password' string"}
    if request.get("op") == "hash":
        return {"ok": hash_password(request["password"])}
    if request.get("op") == "verify" and isinstance(request.get("digest"), str):
        return {"ok": verify_password(request["digest"], request["password"])}
    return {"error": "'op' is 'hash', or 'verify' with a 'digest' string"}


def lower_priority(nice: int = HASHING_NICE) -> None:
    """This process at niceness `nice`. Raising one's own niceness needs no privilege;
    where it is refused (a sandbox) the process hashes at the usual priority."""
    try:
        if os.getpriority(os.PRIO_PROCESS, 0) < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        pass


def hashing_cores(allowed: set[int], slots: int = HASHING_SLOTS) -> set[int]:
    """The cores of `allowed` a hashing process runs on: the last `slots` of them, so the
    first stays to the event loops; all of them when there are no more than `slots`."""
    if len(allowed) <= slots:
        return set(allowed)
    return set(sorted(allowed)[-slots:])


def confine(slots: int = HASHING_SLOTS) -> None:
    """This process (and the threads it starts later: Argon2's lanes) on hashing_cores.
    Set before any thread starts, as the affinity is per thread and inherited; where it
    cannot be set (no sched_setaffinity) the slots and niceness still bound the hashing."""
    try:
        allowed = os.sched_getaffinity(0)
        cores = hashing_cores(allowed, slots)
        if cores != allowed:
            os.sched_setaffinity(0, cores)
    except (AttributeError, OSError):
        pass


@contextlib.contextmanager
def hashing_slot(slots: int = HASHING_SLOTS, directory: str = HASHING_SLOTS_DIR) -> Iterator[int]:
    """One of the host's `slots` hashing slots, held while the block runs (waiting for one
    when all are taken); yields its number, or -1 when the slots' folder cannot be used
    (a read-only file system): then it hashes unbounded rather than refuse every sign-in."""
    files: list[int] = []
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        for i in range(slots):
            files.append(os.open(os.path.join(directory, f"slot-{i}"), os.O_RDWR | os.O_CREAT, 0o600))
    except OSError as exc:
        for fd in files:
            os.close(fd)
        print(f"hashing slots unusable in {directory}: {exc}; hashing without a bound", file=sys.stderr)
        yield -1
        return
    try:
        held = None
        for i, fd in enumerate(files):  # a free one, if any
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = i
                break
            except BlockingIOError:
                continue
        if held is None:  # all taken: queue on one of them
            held = os.getpid() % slots
            fcntl.flock(files[held], fcntl.LOCK_EX)
        try:
            yield held
        finally:
            fcntl.flock(files[held], fcntl.LOCK_UN)
    finally:
        for fd in files:
            os.close(fd)


def serve(lines: IO[bytes], out: IO[bytes], slots: int = HASHING_SLOTS) -> None:
    """Answer requests line by line until `lines` ends (the gateway worker is gone), each
    hash inside one of the host's hashing slots."""
    for line in lines:
        try:
            request = orjson.loads(line)
        except orjson.JSONDecodeError:
            request = None
        if request is None:
            reply = {"error": "a request is one line of JSON"}
        else:
            with hashing_slot(slots):
                reply = answer(request)
        out.write(orjson.dumps(reply) + b"\n")
        out.flush()


if __name__ == "__main__":
    lower_priority()
    confine()
    serve(sys.stdin.buffer, sys.stdout.buffer)
