"""Start and stop a real Celery worker process for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from celery import Celery

from services.runtime.worker_command import worker_argv

ROOT = Path(__file__).resolve().parents[2]


def start_worker(
    redis_url: str,
    queues: str = "tables,sweeps",
    concurrency: int = 1,
    name: str = "test",
    extra_env: dict[str, str] | None = None,
    point_shared: bool = True,
) -> subprocess.Popen:
    """A `celery worker` child process on `redis_url`; returns once it answers a ping.

    `point_shared` also points the shared app at `redis_url` (tests on the session's Redis);
    a test on a Redis of its own passes False and sends through `client_app`."""
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    # Every finished sweep writes its per-game records: into a temporary folder, not var/.
    env.setdefault("CULTISTS_RECORDS_DIR", tempfile.mkdtemp(prefix="cultists-test-records-"))
    log = open(ROOT / f".pytest-worker-{name}.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        worker_argv(queues, name=f"{name}-{os.getpid()}@%h", concurrency=concurrency),
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    if point_shared:
        from workers.app import app

        app.conf.broker_url = app.conf.result_backend = redis_url
    deadline = time.monotonic() + 60
    with client_app(redis_url) as probe:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited with {proc.returncode}; see {log.name}")
            try:
                replies = probe.control.ping(timeout=0.5) or []
            except redis.exceptions.ConnectionError:  # a Redis just restarted drops old sockets
                time.sleep(0.2)
                continue
            if any(f"{name}-{os.getpid()}@" in k for reply in replies for k in reply):
                return proc
    stop_worker(proc)
    raise TimeoutError("celery worker did not answer a ping within 60 s")


def stop_worker(proc: subprocess.Popen, hard: bool = False) -> None:
    """Warm shutdown (SIGTERM) by default; `hard` kills the whole process group (SIGKILL)."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGKILL if hard else signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def start_beat(redis_url: str, schedule: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    """A real `celery beat` child process on `redis_url` (its schedule file at `schedule`)."""
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    log = open(ROOT / f".pytest-beat-{os.getpid()}.log", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "beat", "-s", str(schedule),
         "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip


@contextmanager
def client_app(redis_url: str) -> Iterator[Celery]:
    """A Celery client app of its own on `redis_url` (queues tasks by name, like the
    gateway's light app). Tests on a Redis of their own use it instead of repointing the
    shared app, whose cached connection pools would keep talking to the old Redis."""
    from workers.app import app as shared

    app = Celery("cultists-test-client", broker=redis_url, backend=redis_url, set_as_current=False)
    app.conf.update(
        broker_transport_options=shared.conf.broker_transport_options,
        task_serializer="json",
        accept_content=["json"],
    )
    # Not force-closed afterwards: kombu's global producer pools are keyed by broker URL,
    # and a later client on the same URL would get a closed one.
    try:
        yield app
    finally:
        app.close()
