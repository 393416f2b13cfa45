"""Start and stop a real Celery worker process for integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def start_worker(
    redis_url: str,
    queues: str = "tables,sweeps",
    concurrency: int = 1,
    name: str = "test",
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen:
    """A `celery worker` child process on `redis_url`; returns once it answers a ping."""
    env = {**os.environ, "REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    log = open(ROOT / f".pytest-worker-{name}.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", queues,
         "-c", str(concurrency), "-n", f"{name}-{os.getpid()}@%h", "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    from workers.app import app

    app.conf.broker_url = app.conf.result_backend = redis_url
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"celery worker exited with {proc.returncode}; see {log.name}")
        replies = app.control.ping(timeout=0.5) or []
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
