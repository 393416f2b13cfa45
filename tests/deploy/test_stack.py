"""The platform as `make run` starts it, watched by a real Prometheus with our scrape config.

One test, because bringing the stack up is the expensive part: `cultists run` on free
ports, `cultists status` says every part is up, bot games are played through the gateway,
Prometheus (Debian's binary, fed the project's prometheus.yml with local targets) scrapes
every service until the engine latency series of all three games are there, each
dashboard query names a metric some service really exports, and a Ctrl-C to the process
group leaves no process behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from services.runtime.ports import free_port, wait_for_port
from tests.deploy.test_configs import DEPLOY, dashboard_metric_names, family

GAMES = ("crazy_cultists", "trash_cult", "tricky_cultists")
SHORT_GAMES = {  # bot-only games that end in seconds
    "crazy_cultists": {"variant": "beast"},
    "trash_cult": {"max_turns": 30},
    "tricky_cultists": {"rounds": 1},
}


def _http(url: str, body: dict | None = None, timeout: float = 10) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


def _seat_view(gateway: str, table: str, token: str) -> dict | None:
    """The seat's view once it must decide (bots move first where they sit first)."""
    request = urllib.request.Request(
        f"{gateway}/api/tables/{table}/view", headers={"Authorization": f"Bearer {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as reply:
        view = json.loads(reply.read())
    return view if view["legal_actions"] else None


def _post_status(url: str, body: dict, token: str) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture()
def stack(tmp_path):
    prometheus = shutil.which("prometheus")
    assert prometheus, "prometheus is not installed: `make install` (deploy/system-packages.sh) installs it"
    ports = {f"ENGINE_PORT_{g.upper()}": free_port() for g in GAMES}
    ports |= {f"ENGINE_METRICS_PORT_{g.upper()}": free_port() for g in GAMES}
    ports |= {"GATEWAY_PORT": free_port(), "WORKER_METRICS_PORT_SWEEPS": free_port(),
              "WORKER_METRICS_PORT_TABLES": free_port()}  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"} | {k: str(v) for k, v in ports.items()}
    env["CULTISTS_DATA"] = str(tmp_path / "var")
    log = open(tmp_path / "run.log", "wb")  # noqa: SIM115 - closed below
    run = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "run"],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    prom = None
    try:
        run_file = tmp_path / "var" / "run.json"
        _wait(lambda: run_file.exists() or run.poll() is not None, 120, "cultists run to come up")
        assert run.poll() is None, (tmp_path / "run.log").read_text()[-3000:]
        facts = json.loads(run_file.read_text())
        # Prometheus with the project's config, the targets rewritten to this run's ports.
        config_dir = tmp_path / "prometheus"
        shutil.copytree(DEPLOY / "prometheus", config_dir)
        m = ports
        targets = {
            "engines": [f"127.0.0.1:{m[f'ENGINE_METRICS_PORT_{g.upper()}']}" for g in GAMES],
            "gateway": [f"127.0.0.1:{m['GATEWAY_PORT']}"],
            "workers": [
                f"127.0.0.1:{m['WORKER_METRICS_PORT_SWEEPS']}",
                f"127.0.0.1:{m['WORKER_METRICS_PORT_TABLES']}",
            ],
        }
        for job, addresses in targets.items():
            (config_dir / "targets" / f"{job}.json").write_text(json.dumps([{"targets": addresses}]))
        prom_port = free_port()
        prom = subprocess.Popen(
            [prometheus, f"--config.file={config_dir / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "wb"),  # noqa: SIM115
        )  # fmt: skip
        wait_for_port(prom_port, timeout=60)
        yield {"run": run, "env": env, "facts": facts, "targets": targets, "prometheus": prom_port,
               "log": tmp_path / "run.log"}  # fmt: skip
    finally:
        if prom is not None:
            prom.terminate()
            prom.wait(timeout=30)
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
        log.close()


def test_stack_runs_is_scraped_and_stops_clean(stack):
    env, facts = stack["env"], stack["facts"]
    status = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert status.returncode == 0, status.stdout + status.stderr
    assert status.stdout.count(" up ") >= 6

    gateway = facts["gateway_url"]
    tables = []
    for game in GAMES:
        desc = _http(f"{gateway}/api/games/{game}")
        players = desc["default_players"]
        body = {"game": game, "players": players, "config": SHORT_GAMES[game],
                "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
        tables.append(_http(f"{gateway}/api/tables", body)["table"])
    for table in tables:
        _wait(
            lambda t=table: _http(f"{gateway}/api/tables/{t}")["status"] == "finished", 120, f"table {table}"
        )

    # A human seat sends an action the engine refuses: the gateway counts the engine error.
    human = _http(f"{gateway}/api/tables", {"game": "crazy_cultists", "players": 2,
                                           "seats": [{"kind": "human"}, {"kind": "bot", "bot": "random"}]})  # fmt: skip
    token = _http(f"{gateway}/api/tables/{human['table']}/seats/0", {})["token"]
    version = _wait(lambda: _seat_view(gateway, human["table"], token), 60, "the human seat's turn")[
        "version"
    ]
    refused = _post_status(
        f"{gateway}/api/tables/{human['table']}/actions", {"action": 99999, "version": version}, token
    )
    assert refused == 400

    # Two tiny nightly suites, so sweep progress and the balance (drift) gauges exist.
    from celery import Celery

    celery = Celery("stack-test", broker=facts["redis_url"])
    for day in (1, 2):
        before = len(_http(f"{gateway}/api/sweeps?limit=100")["sweeps"])
        celery.send_task(
            "workers.sweeps.tasks.run_nightly", kwargs={"games": 2, "day": day, "poll": 1.0}, queue="sweeps"
        )

        def nightly_done(before=before) -> bool:
            sweeps = _http(f"{gateway}/api/sweeps?limit=100")["sweeps"]
            return len(sweeps) >= before + len(GAMES) and all(s["status"] == "done" for s in sweeps)

        _wait(nightly_done, 300, f"night {day}'s suite")
    celery.close()

    def series(query: str) -> list[dict]:
        url = f"http://127.0.0.1:{stack['prometheus']}/api/v1/query?" + urllib.parse.urlencode(
            {"query": query}
        )
        return _http(url)["data"]["result"]

    def latency_for_all_games():
        found = {
            s["metric"]["game"]
            for s in series('game_method:cultists_engine_rpc_latency_seconds:p99{method="Apply"}')
        }
        return found >= set(GAMES)

    _wait(latency_for_all_games, 90, "engine latency series for all three games in Prometheus")
    up = {s["metric"]["instance"]: s["value"][1] for s in series("up")}
    scraped = [a for addresses in stack["targets"].values() for a in addresses]
    assert all(up.get(a) == "1" for a in scraped), up

    # Every metric a dashboard queries is exported by some service of this very run.
    exported: set[str] = set()
    for address in scraped:
        body = urllib.request.urlopen(f"http://{address}/metrics", timeout=10).read().decode()
        exported |= {family(line.split()[2]) for line in body.splitlines() if line.startswith("# TYPE ")}
    missing = {n for n in dashboard_metric_names() if n != "up" and n not in exported}
    assert not missing, f"dashboards query metrics nobody exports: {sorted(missing)}"

    # Ctrl-C (SIGINT to the process group, as a terminal sends it) stops everything.
    run = stack["run"]
    processes = _descendants(run.pid) | {run.pid}
    os.killpg(run.pid, signal.SIGINT)
    assert run.wait(timeout=60) == 0
    _wait(lambda: not any(_alive(p) for p in processes), 30, "every process of the run to exit")
    assert "platform is up" in stack["log"].read_text()
