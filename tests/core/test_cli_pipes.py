"""CLI output piped into a reader that stops early (`| head`) ends quietly, not with a traceback.

The reader's end of the pipe is closed before the command writes anything, so every write
meets a closed pipe: the situation of `cultists replay --steps | head` once head has its
lines, made deterministic.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=120,
        check=True,
    )


def _into_closed_pipe(*args: str) -> tuple[int, str]:
    """Run the CLI with stdout a pipe whose reader has already gone; (status, stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    return proc.wait(timeout=120), err


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    line = _cli("simulate", "tricky_cultists", "--games", "1", "--jsonl", "--actions").stdout
    path = tmp_path_factory.mktemp("replay") / "game.json"
    path.write_bytes(line)
    return path


@pytest.mark.parametrize("extra", [["--steps"], ["--steps", "--state"], []])
def test_replay_into_a_closed_pipe_exits_quietly(record: Path, extra: list[str]) -> None:
    status, err = _into_closed_pipe("replay", str(record), *extra)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert status == 141  # what a shell reports for a writer whose reader left


def test_simulate_jsonl_into_a_closed_pipe_exits_quietly() -> None:
    status, err = _into_closed_pipe("simulate", "trash_cult", "--games", "3", "--jsonl")
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert status == 141


def test_replay_steps_piped_to_head_prints_the_first_steps(record: Path) -> None:
    """The shell pipeline of the issue, end to end: head gets its lines, no traceback."""
    cmd = f"{sys.executable} -m services.cli.main replay --steps {record} | head -n 3"
    done = subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, timeout=120)
    assert done.stdout.decode().splitlines()[0].startswith("    0  seat ")
    assert len(done.stdout.decode().splitlines()) == 3
    assert "Traceback" not in done.stderr.decode(), done.stderr.decode()
