"""`cultists run` tries every port it will bind before it starts anything: a busy one is
refused in one line naming the port, the part, what holds it and the variable that moves
it, and nothing is started (no Redis, no data written beyond the lock)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from tests.support.run_ports import free_run_ports


def test_a_busy_port_is_refused_before_anything_starts(tmp_path):
    data = tmp_path / "data"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
        env |= free_run_ports() | {"GATEWAY_PORT": str(port), "CULTISTS_DATA": str(data)}
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "services.cli.main", "run"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        took = time.monotonic() - started
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"cultists: port {port} (gateway) is in use by pid {os.getpid()} (")
    assert line.endswith("stop what holds it, or move it with GATEWAY_PORT=<port>")
    assert sorted(p.name for p in data.iterdir()) == ["run.lock"]  # no Redis folder, no run file
    # Nothing was started, so nothing was waited on: far from the minute a health check
    # once spent before blaming the gateway (a generous bound for a busy machine).
    assert took < 60
