"""Every subcommand against a table of bad inputs: one line on stderr that names what is
wrong and what to do, the documented exit status (2 bad input, 3 unreachable or not
found, 1 a miss), and never a traceback.

Run in-process through `main` (the wrapper every subcommand goes through), with no
platform running: the data folder is a scratch one and REDIS_URL is unset. A few cases
run as real processes too, so the installed entry point is covered end to end.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from services.cli.main import main as cli
from services.engines.core.play import play_game
from services.engines.registry import load_game

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "examples" / "sweeps" / "crazy_cultists_variants.yaml"
TUNE = ROOT / "examples" / "tunes" / "crazy_cultists_2p.yaml"
CARDS = ROOT / "examples" / "cards" / "trash_cult_2p.yaml"
NO_PLATFORM = "no running platform found"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bad files of every kind a command reads, made once from one real game's record."""
    tmp_path = tmp_path_factory.mktemp("bad-files")
    spec = load_game("trash_cult")
    game = play_game(spec, spec.make_config(), 2, 7, ["random", "random"], record_actions=True)
    record = {**game.summary(), "config": game.config, "actions": game.actions}
    out = {"folder": tmp_path / "folder"}
    out["folder"].mkdir()

    def write(name: str, body: str | bytes) -> None:
        out[name] = tmp_path / name
        out[name].write_bytes(body if isinstance(body, bytes) else body.encode())

    write("empty.json", "")
    write("not-json.json", "{this is not json")
    write("array.json", "[1, 2, 3]")
    write("no-actions.json", json.dumps({k: v for k, v in record.items() if k != "actions"}))
    write("torn.json", json.dumps({**record, "actions": [*record["actions"][:3], [1, 2, 3]]}))
    write("illegal.json", json.dumps({**record, "actions": [*record["actions"][:5], [0, 999999]]}))
    write("bad-key.json", json.dumps({**record, "deal_key": "zz" * 32}))
    write("bad-seed.json", json.dumps({**record, "seed": "four"}))
    write("unknown-game.json", json.dumps({**record, "game": "chess"}))
    write("bad.yaml", "game: crazy_cultists\ngames: [1, 2\n")
    write("unknown-field.yaml", "game: crazy_cultists\ngames: 10\nplayers: [3]\nbogus: 1\n")
    return out


@pytest.fixture()
def no_platform(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch data folder no run holds, and nothing naming a Redis or a gateway."""
    for name in ("REDIS_URL", "GATEWAY_URL", "PROMETHEUS_URL"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "data"
    monkeypatch.setenv("CULTISTS_DATA", str(data))
    monkeypatch.chdir(tmp_path)
    return data


# (argv, exit status, words the one line must hold); "{name}" is a file of `files`.
CASES = [
    # flags
    (["frobnicate"], 2, ["invalid choice: 'frobnicate'", "cultists --help"]),
    (["simulate", "chess"], 2, ["invalid choice: 'chess'"]),
    (
        ["simulate", "crazy_cultists", "--games", "x"],
        2,
        ["--games", "'x' is not a whole number", "simulate --help"],
    ),
    (["simulate", "crazy_cultists", "--games", "0"], 2, ["--games", "0 is not at least 1"]),
    (
        ["simulate", "crazy_cultists", "--players", "99"],
        2,
        ["takes 3-6 players, not 99", "--set two_players=true"],
    ),
    (["simulate", "crazy_cultists", "--players", "2"], 2, ["set two_players=true"]),
    (["simulate", "crazy_cultists", "--set", "bogus=1"], 2, ["bogus"]),
    (["simulate", "crazy_cultists", "--set", "threshold"], 2, ["threshold"]),
    (["simulate", "crazy_cultists", "--bots", "grandmaster"], 2, ["grandmaster"]),
    (["simulate", "crazy_cultists", "--bots", "random,random"], 2, ["2 bots for 4 seats"]),
    (["ladder", "crazy_cultists", "-j", "0"], 2, ["-j/--jobs", "0 is not at least 1"]),
    (["ladder", "crazy_cultists", "--bots", "random,grandmaster"], 2, ["grandmaster"]),
    (["sweep", str(SPEC), "--local", "--jobs", "-3"], 2, ["-3 is not at least 1"]),
    (["sweep"], 2, ["name a sweep spec file"]),
    (["nightly", "--local", "--set", "threshold=12"], 2, ["GAME:FIELD=VALUE"]),
    (["nightly", "--local", "--set", "chess:threshold=12"], 2, ["no installed game 'chess'"]),
    (["nightly", "--local", "--games", "0"], 2, ["0 is not at least 1"]),
    (["completion", "fish"], 2, ["invalid choice: 'fish'"]),
    (["status", "--engine", "chess=127.0.0.1:1"], 2, ["no installed game 'chess'"]),
    # files and records
    (["replay", "{missing}"], 2, ["cannot open", "no such file", "check the path"]),
    (["replay", "{folder}"], 2, ["cannot open", "is a directory", "name a file"]),
    (["replay", "{empty.json}"], 2, ["is empty"]),
    (["replay", "{not-json.json}"], 2, ["is not a JSON replay record"]),
    (["replay", "{array.json}"], 2, ["not a replay record"]),
    (["replay", "{no-actions.json}"], 2, ["lacks actions"]),
    (["replay", "{torn.json}"], 2, ["action 3 is [1,2,3]", "not a [seat, action] pair", "corrupted"]),
    (["replay", "--steps", "{torn.json}"], 2, ["action 3 is [1,2,3]"]),
    (["replay", "{illegal.json}"], 2, ["action 5 (seat 0, action 999999) is not legal there"]),
    (["replay", "{bad-key.json}"], 2, ["'deal_key' must be the table's 64 hex digits"]),
    (["replay", "--steps", "{illegal.json}"], 2, ["action 5 (seat 0, action 999999) is not legal there"]),
    (["replay", "{bad-seed.json}"], 2, ["'seed' must be a whole number"]),
    (["replay", "{unknown-game.json}"], 2, ["unknown game 'chess'"]),
    (["sweep", "{missing}", "--local"], 2, ["cannot read sweep spec"]),
    (["sweep", "{bad.yaml}", "--local"], 2, ["is not YAML or JSON", "line 3"]),
    (["sweep", "{unknown-field.yaml}", "--local"], 2, ["bogus"]),
    (["tune", "{missing}", "--local"], 2, ["cannot read"]),
    (["cards", "{missing}", "--local"], 2, ["cannot read cards spec"]),
    # no platform to talk to: never a guessed Redis
    (["sweep", str(SPEC)], 3, [NO_PLATFORM, "make run", "--redis-url", "--local"]),
    (["sweep", "--follow", "abc"], 3, [NO_PLATFORM]),
    (["sweep", "--cancel", "abc"], 3, [NO_PLATFORM]),
    (["tune", str(TUNE)], 3, [NO_PLATFORM, "--local"]),
    (["cards", str(CARDS)], 3, [NO_PLATFORM, "--local"]),
    (["nightly", "--games", "2"], 3, [NO_PLATFORM, "--local"]),
    (["status"], 3, [NO_PLATFORM, "make run"]),
]


@pytest.mark.parametrize(("argv", "status", "words"), CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_a_bad_input_is_one_line_and_its_exit_status(argv, status, words, files, no_platform, capsys):
    named = {f"{{{k}}}": str(v) for k, v in files.items()} | {"{missing}": str(no_platform / "missing.json")}
    argv = [named.get(a, a) for a in argv]
    assert cli(argv) == status
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    [line] = err.strip().splitlines()
    assert line.startswith("cultists: ")
    for word in words:
        assert word in line, line
    assert not no_platform.exists() or status != 3, "a refused command created the data folder"
    assert not (no_platform.parent / "var").exists(), "a command created ./var"


def test_a_busy_serve_port_is_refused_naming_its_holder(no_platform, capsys):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        for argv in (
            ["serve", "trash_cult", "--port", str(port)],
            ["serve", "trash_cult", "--port", "0", "--metrics-port", str(port)],
        ):
            assert cli(argv) == 2
            [line] = capsys.readouterr().err.strip().splitlines()
            assert f"port {port}" in line and "in use by pid" in line and "--port" in line, line
            assert sys.executable.rsplit("/", 1)[-1] in line or "python" in line, line  # the holder: us


def test_serve_checks_its_port_on_the_address_it_binds(no_platform, capsys):
    """`--host ::1` tries [::1]:P, not 127.0.0.1:P: a port held there is refused
    (tests/runtime/test_ports.py: one held on 127.0.0.1 only is not)."""
    with socket.socket(socket.AF_INET6) as holder:
        holder.bind(("::1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert cli(["serve", "trash_cult", "--host", "::1", "--port", str(port)]) == 2
        [line] = capsys.readouterr().err.strip().splitlines()
        assert f"port {port}" in line and "in use by pid" in line, line


@pytest.mark.parametrize(
    ("argv", "status", "words"),
    [
        (["replay", "/nonexistent/game.json"], 2, ["cannot open /nonexistent/game.json"]),
        (["simulate", "trash_cult", "--games", "-1"], 2, ["--games"]),
        (["status"], 3, [NO_PLATFORM]),
    ],
)
def test_the_installed_command_says_the_same(argv, status, words, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "CULTISTS_DATA": str(tmp_path / "data"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", *argv],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert all(w in line for w in words), line
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refused command wrote files"
