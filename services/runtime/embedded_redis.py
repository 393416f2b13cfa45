"""A real Redis server started as a child process when no REDIS_URL is given.

Used by `cultists run` on a laptop and by the tests on a machine where no Redis runs. It
is the real binary, never a fake: the system's `redis-server` if there is one, else the
one the `redis-server` PyPI package ships.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .ports import free_port, wait_for_port


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    try:
        import redis_server  # type: ignore[import-not-found]

        return str(redis_server.REDIS_SERVER_PATH)
    except ImportError:
        raise FileNotFoundError(
            "no redis-server found: install Redis (apt-get install redis-server) "
            "or `pip install redis-server`, or set REDIS_URL"
        ) from None


@dataclass
class EmbeddedRedis:
    process: subprocess.Popen
    port: int
    workdir: tempfile.TemporaryDirectory

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.workdir.cleanup()


# What the embedded Redis's one alarming start-up line means here (see ProcessSpec.notes).
REDIS_NOTES = {
    "WARNING Memory overcommit must be enabled": (
        "(Redis warns that vm.overcommit_memory is 0: that risks background saves, which this "
        "Redis never makes (append-only file, no snapshots); harmless here, and "
        "`sysctl vm.overcommit_memory=1` silences it)"
    )
}


def redis_argv(port: int, directory: Path, persist: bool) -> list[str]:
    """The redis-server command line: loopback only, no snapshots; `persist` turns on
    the append-only file (what `cultists run` restarts from after Redis dies)."""
    return [
        redis_binary(),
        "--bind", "127.0.0.1",
        "--port", str(port),
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "yes" if persist else "no",
        "--protected-mode", "no",
        "--loglevel", "warning",
        # A live table's hash stays a listpack (about half the bytes of a hashtable) while
        # its largest value, the packed state or its moves, is under 4 KB
        # (services/platform/packing.py); the default 64 bytes made every table a hashtable.
        "--hash-max-listpack-value", "4096",
    ]  # fmt: skip


def start_redis(
    port: int | None = None, persist: bool = False, data_dir: Path | None = None
) -> EmbeddedRedis:
    """Start redis-server on a free loopback port; `persist` turns on the append-only file."""
    port = port or free_port()
    workdir = tempfile.TemporaryDirectory(prefix="cultists-redis-")
    args = redis_argv(port, Path(data_dir or workdir.name), persist)
    # Its own session: a Ctrl-C meant for `cultists run` must not stop Redis before the
    # processes that use it have shut down.
    process = subprocess.Popen(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    try:
        wait_for_port(port, timeout=15)
    except TimeoutError:
        process.kill()
        err = process.stderr.read().decode() if process.stderr else ""
        raise RuntimeError(f"redis-server did not start: {err}") from None
    return EmbeddedRedis(process, port, workdir)
