"""Chaos: `cultists run` heals whatever dies, and a killed supervisor leaves nothing behind.

One run on free ports serves every kill, because bringing the platform up is the
expensive part. With bot tables being played and a sweep running, each kind of child is
killed with SIGKILL in turn (an engine, the gateway master, the tables worker, the bots
worker that plays bot-only tables, the sweeps worker, beat, Redis with its append-only
file kept, Prometheus when the run has one). After each kill, within a bounded time, the
supervisor has restarted it and `cultists status` says every part is up; while it is
down, clients get 200 or a 503 with Retry-After, never a 500 or 502. At the end every
table's version equals its action count (no move half-applied), every table played to
the end, every finished game's replay record rebuilds it, and the sweep finished with
every game counted once. Then the supervisor itself is killed: no process of the run is left,
and a new run on the same data folder takes the lock over and comes up cleanly.

Every wait polls with a generous bound: a loaded machine makes this slower, never wrong.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from services.engines.core.play import replay
from services.engines.registry import load_game
from services.runtime.run_lock import run_processes
from tests.deploy.stack import GAMES, OPERATOR_ENV, SHORT_GAMES, staff_headers
from tests.deploy.stack import alive as _alive
from tests.deploy.stack import http as _http
from tests.deploy.stack import wait as _wait
from tests.support.run_ports import free_run_ports

ROOT = Path(__file__).resolve().parents[2]
# Killed in this order; Redis last, when there is most to lose.
VICTIMS = ("crazy_cultists", "gateway", "tables", "bots", "sweeps", "beat", "redis")
SWEEP = {"game": "trash_cult", "seed": 11, "games": 24, "chunk": 4, "players": [2], "max_turns": 40,
         "lineups": ["random"]}  # fmt: skip


def _start_run(env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "run"],
        env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
        start_new_session=True, cwd=ROOT,
    )  # fmt: skip


def _up(run: subprocess.Popen, data: Path, log: Path) -> dict:
    """The run file once this run says the platform is up (a killed run's file may linger)."""
    _wait(lambda: run.poll() is not None or _facts(data).get("pid") == run.pid, 180, "cultists run")
    assert run.poll() is None, log.read_text()[-3000:]
    return _facts(data)


def _facts(data: Path) -> dict:
    try:
        return json.loads((data / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def _status(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", "status"],
        env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip


def _probe(url: str, body: dict | None = None) -> int | None:
    """The HTTP status of one request; None when nothing listens (the gateway restarting).
    Any 503 must carry Retry-After."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=15) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        if exc.code == 503:
            assert exc.headers.get("Retry-After"), "a 503 without Retry-After"
            code = json.loads(exc.read())["error"]["code"]
            assert code in ("engine_unavailable", "store_unavailable"), code
        return exc.code
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def _call(url: str, body: dict | None = None, timeout: float = 90) -> dict:
    """`_http`, retried while the answer is a 503, a refused connection or a slow reply
    (right after a kill, or on a loaded machine), as a client would."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            # Sweeps are the operator's (CULTISTS_OPERATOR, made by the run).
            staff = staff_headers(url.split("/api/")[0]) if "/api/sweeps" in url else None
            return _http(url, body, timeout=20, headers=staff)
        except OSError as exc:  # URLError, HTTPError 503, timeouts
            if isinstance(exc, urllib.error.HTTPError) and exc.code != 503:
                raise
            if time.monotonic() > deadline:
                raise AssertionError(f"{url} kept failing: {exc}") from None
            time.sleep(0.5)


def _bot_table(gateway: str, game: str) -> str:
    players = {"crazy_cultists": 3, "trash_cult": 2, "tricky_cultists": 4}[game]  # CC-2: 3 or more
    body = {"game": game, "players": players, "config": SHORT_GAMES[game],
            "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
    return _call(f"{gateway}/api/tables", body)["table"]


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chaos")
    ports = free_run_ports()
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | ports | OPERATOR_ENV
    # A killed worker's unacknowledged tasks come back after this many seconds, and the
    # sweep chunk it held once its lease (10 s, renewed every third of it) has run out and
    # the reconciler (every 2 s) looks: with the production 60 s and 30 s, the test would
    # spend a minute waiting for the lost chunk.
    env |= {"CULTISTS_DATA": str(tmp / "var"), "CELERY_VISIBILITY_TIMEOUT": "10", "GATEWAY_WORKERS": "2",
            "SWEEP_LEASE_SECONDS": "10", "SWEEP_RECONCILE_SECONDS": "2"}  # fmt: skip
    log = tmp / "run.log"
    state = {"env": env, "data": tmp / "var", "log": log, "run": _start_run(env, log)}
    try:
        state["facts"] = _up(state["run"], state["data"], log)
        yield state
    finally:
        for key in ("run", "second"):
            proc = state.get(key)
            if proc is not None and proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def test_every_part_comes_back_after_kill_9(platform):
    env, data = platform["env"], platform["data"]
    facts = platform["facts"]
    gateway = facts["gateway_url"]
    tables = platform["tables"] = [_bot_table(gateway, g) for g in GAMES]
    sweep = None

    victims = VICTIMS + (("prometheus",) if "prometheus" in facts["parts"] else ())
    for victim in victims:
        if victim == "sweeps":  # a sweep in flight when its worker dies
            sweep = _call(f"{gateway}/api/sweeps", SWEEP)["id"]
            url = f"{gateway}/api/sweeps/{sweep}"
            _wait(lambda url=url: _call(url)["games_done"] > 0, 120, "the sweep to start")
        before = _facts(data)["parts"][victim]
        os.kill(before["pid"], signal.SIGKILL)
        seen: set[int | None] = set()

        def healed(before=before, victim=victim, seen=seen) -> bool:
            seen.add(_probe(f"{gateway}/api/tables/{tables[0]}/view"))
            seen.add(_probe(f"{gateway}/api/games/{GAMES[1]}"))
            part = _facts(data)["parts"][victim]
            return part["pid"] != before["pid"] and part["state"] == "running"

        _wait(healed, 90, f"{victim} to be restarted")
        part = _facts(data)["parts"][victim]
        assert part["restarts"] == before["restarts"] + 1 and part["last_exit"] == -signal.SIGKILL
        assert seen <= {200, 503, None}, f"while {victim} was down clients saw {seen}"
        shown: list[str] = []

        def all_up(shown=shown) -> bool:
            result = _status(env)
            shown[:] = result.stdout.splitlines()
            return result.returncode == 0

        _wait(all_up, 120, f"every part up after killing {victim}")
        [line] = [line for line in shown if line.split()[:2] == ["process", victim]]
        assert f"restarts {part['restarts']}" in line and "last exit: signal SIGKILL" in line, line
        tables.append(_bot_table(gateway, GAMES[len(tables) % len(GAMES)]))  # play goes on

    log = platform["log"].read_text()
    for victim in victims:
        assert f"{victim} exited with signal SIGKILL" in log

    # Bots resume: every table, those started before the kills too, plays to the end.
    def finished() -> bool:
        return all(_call(f"{gateway}/api/tables/{t}")["status"] == "finished" for t in tables)

    _wait(finished, 240, "every table to finish")

    import redis

    from services.platform.keys import table_key
    from services.platform.packing import unpack_actions

    client = redis.Redis.from_url(facts["redis_url"])
    for table in tables:
        version = int(client.hget(table_key(table), "version"))
        moves = unpack_actions(client.hget(table_key(table), "acts"))
        assert version == len(moves), f"table {table} half-applied a move"
        record = _call(f"{gateway}/api/tables/{table}/replay")
        spec = load_game(record["game"])
        key = bytes.fromhex(record["deal_key"]) if record.get("deal_key") else None  # docs/fairness.md
        rebuilt = replay(spec, spec.make_config(record["config"]), record["players"], record["seed"],
                         record["actions"], key)  # fmt: skip
        view = _call(f"{gateway}/api/tables/{table}/view")
        assert rebuilt.is_terminal() and sorted(rebuilt.winners()) == sorted(view["winners"])
    client.close()

    # The sweep whose worker was killed finishes, each game counted once.
    assert sweep is not None
    _wait(lambda: _call(f"{gateway}/api/sweeps/{sweep}")["status"] == "done", 180, "the sweep to finish")
    done = _call(f"{gateway}/api/sweeps/{sweep}")
    assert done["games_done"] == done["total_games"] == SWEEP["games"]

    # The restarted sweeps worker serves its series: every game's, not only the swept one's.
    port = platform["env"]["WORKER_METRICS_PORT_SWEEPS"]
    page = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    for game in GAMES:
        assert f'cultists_sweep_games_simulated_total{{game="{game}"}}' in page, page[:2000]


def test_a_killed_supervisor_leaves_nothing_and_a_new_run_starts(platform):
    env, data, run = platform["env"], platform["data"], platform["run"]
    run_id = json.loads((data / "run.lock").read_text())["run_id"]
    assert run_processes(run_id), "the run's children carry its run id"
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    _wait(
        lambda: not any(_alive(p) for p in run_processes(run_id)), 30, "every child of the killed run to die"
    )

    second = platform["second"] = _start_run(env, platform["log"])
    facts = _up(second, data, platform["log"])
    assert facts["pid"] == second.pid
    _wait(lambda: _status(env).returncode == 0, 120, "the new run to be up")
    # The data survived: tables of the first run are still there.
    for table in platform.get("tables", []):
        assert _call(f"{facts['gateway_url']}/api/tables/{table}")["status"] == "finished"
    os.killpg(second.pid, signal.SIGINT)
    assert second.wait(timeout=60) == 0
