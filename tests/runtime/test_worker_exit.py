"""A worker that hits an unrecoverable error exits, so its supervisor can restart it,
even when Celery's shutdown after the error would hang (workers/worker.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def test_an_unrecoverable_error_ends_the_worker_even_when_its_shutdown_hangs(redis_url, tmp_path):
    env = {**os.environ, "REDIS_URL": redis_url, "CELERY_FAILURE_EXIT_SECONDS": "2"}
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "tests.support.broken_worker_app", "worker",
         "--pool", "solo", "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
        env=env, cwd=os.getcwd(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"the worker hung after its unrecoverable error:\n{out[-2000:]}") from None
    assert "Unrecoverable error" in out and "the broker connection broke" in out, out[-2000:]
    assert proc.returncode == 1
    assert time.monotonic() - started < 45
