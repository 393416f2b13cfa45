"""The README's command lines, read from README.md and run as a newcomer would, each
checked to exit as the README says: so the README cannot drift from the CLI again.

Every `.venv/bin/cultists` line of the bash blocks under "## The command line" runs in a
scratch folder (its own data folder, no REDIS_URL, no platform running), through bash,
as written, with two documented changes to keep the suite fast: `--games N` plays at most
a few games (a sweep gets `--games` too, which the README names), and `serve`'s ports are
moved to free ones (its default ports may be another engineer's here), then it is stopped
with Ctrl-C as the README says. A block the README introduces as needing the running
platform must say, in one line, that there is none and exit 3.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from services.runtime.ports import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
FEW = 3  # games (per cell) every example is shrunk to


def readme_blocks() -> list[tuple[str, list[str]]]:
    """(the paragraph before the block, its command lines) for each bash block of the
    README's command-line section, continuation lines joined, comments kept."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## The command line", 1)[1].split("\n## ", 1)[0]
    blocks = []
    for intro, body in re.findall(r"((?:[^\n]+\n)*)\n```bash\n(.*?)```", section, re.S):
        lines = body.replace("\\\n", " ").splitlines()
        blocks.append((" ".join(intro.split()), [line for line in lines if line.strip()]))
    return blocks


def examples() -> list[tuple[str, int]]:
    """(command line, the exit status the README documents for it)."""
    out = []
    for intro, lines in readme_blocks():
        status = 3 if "exits 3" in intro else 0
        out += [(line, status) for line in lines]
    return out


EXAMPLES = examples()


def test_the_readme_shows_every_command():
    shown = {re.search(r"cultists (\S+)", line).group(1) for line, _ in EXAMPLES}
    assert shown >= {"simulate", "replay", "serve", "ladder", "sweep", "nightly", "status", "completion"}
    assert {status for _, status in EXAMPLES} == {0, 3}


def shrink(line: str) -> str:
    """The README's line with the documented changes: few games, a sweep's too."""
    line = re.sub(r"--games \d+", f"--games {FEW}", line)
    if " sweep " in line and "--games" not in line.split("#")[0]:
        line = line.replace(".yaml", f".yaml --games {FEW}", 1)
    if re.search(r" nightly ", line) and "--games" not in line.split("#")[0]:
        line = line.replace(" nightly ", f" nightly --games {FEW} -j 1 ", 1)
    return line


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A folder where the README's relative paths work (.venv, examples), a data folder of
    its own, and no platform to find."""
    home = tmp_path_factory.mktemp("newcomer")
    for name in (".venv", "examples"):
        (home / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "GATEWAY_URL", "PROMETHEUS_URL")}
    env |= {"CULTISTS_DATA": str(home / "data"), "HOME": str(home), "XDG_DATA_HOME": str(home / "share")}
    return home, env


@pytest.mark.parametrize(
    ("line", "status"), EXAMPLES, ids=[e[0].split("#")[0].strip()[:70] for e in EXAMPLES]
)
def test_a_readme_line_exits_as_documented(line, status, scratch):
    home, env = scratch
    command = shrink(line)
    if " serve " in command:
        _serve(command, home, env)
        return
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == status, f"{command}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr, done.stderr
    if status == 3:
        [said] = done.stderr.strip().splitlines()
        assert said.startswith("cultists: no running platform found") and "make run" in said


def _serve(command: str, home: Path, env: dict[str, str]) -> None:
    """`serve` runs until Ctrl-C: on free ports, it must listen, then stop cleanly on SIGINT."""
    port, metrics = free_port(), free_port()
    command = re.sub(r"--port \d+", f"--port {port}", command)
    command = re.sub(r"--metrics-port \d+", f"--metrics-port {metrics}", command)
    argv = command.split("#")[0].split()
    proc = subprocess.Popen(
        argv, cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_port(port, timeout=60)  # the engine's start, on a busy 2-core machine
        wait_for_port(metrics, timeout=10)
    finally:
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert time.monotonic() - started < 60
