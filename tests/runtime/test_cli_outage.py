"""With Redis unreachable every command that needs it says so in one line (exit status 3),
`sweep --follow` says it is reconnecting, and `cultists status` reports it down; never a
traceback."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from services.runtime.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "sweeps" / "crazy_cultists_variants.yaml"


def test_every_command_says_redis_is_unreachable_in_one_line(tmp_path):
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    env = {
        **os.environ,
        "REDIS_URL": nowhere,
        "CULTISTS_DATA": str(tmp_path),
        "GATEWAY_URL": "http://127.0.0.1:1",
    }
    commands = {
        "submit": ["sweep", str(SPEC), "--no-wait"],
        "follow": ["sweep", "--follow", "0123abcd"],
        "cancel": ["sweep", "--cancel", "0123abcd"],
        "status": ["status"],
    }
    running = {  # side by side: each waits out its client's connection retries
        name: subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", *argv],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, argv in commands.items()
    }
    for name, proc in running.items():
        if name == "follow":  # a follower waits for Redis to come back: it says so and goes on
            said = _first_line_with(proc, "Redis unreachable", timeout=45)
            proc.kill()
            out, err = proc.communicate()
            assert "Traceback" not in out + err and said, err
            continue
        out, err = proc.communicate(timeout=120)
        assert "Traceback" not in out + err, f"{name}: {err}"
        if name == "status":
            assert proc.returncode == 1
            assert [line.split()[:2] for line in out.splitlines() if line.startswith("redis")] == [
                ["redis", "DOWN"]
            ]
            continue
        assert proc.returncode == 3, f"{name}: {out}{err}"
        [line] = err.strip().splitlines()
        assert line.startswith("cultists: Redis is unreachable (") and "Connection refused" in line


def _first_line_with(proc: subprocess.Popen, text: str, timeout: float) -> str | None:
    """Reads the process's stderr until a line holds `text` (a follower never exits on its
    own, so waiting for it to end would cost the whole timeout); the rest stays readable."""
    found: list[str] = []

    def read() -> None:
        for line in proc.stderr:
            if text in line:
                found.append(line)
                return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout)
    return found[0] if found else None
