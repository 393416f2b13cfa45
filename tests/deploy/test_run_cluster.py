"""`cultists run --redis-cluster 3`: the whole platform on an embedded 3-master Redis
Cluster, as a laptop user would try it (docs/scale.md). Bot tables of every game play to
the end and an ad hoc sweep finishes with every game counted, so live play, the tables
worker, the sweeps worker and the sweeps store all work across the cluster's slots, with
Celery's broker on a Redis of its own. Waits are generous: bringing up seven Redis
processes, three engines, a gateway and three workers on a loaded 2-core machine is slow,
never wrong."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import redis

from tests.deploy.stack import (
    GAMES,
    OPERATOR_ENV,
    SHORT_GAMES,
    _stop,
    http,
    staff_headers,
    wait,
    wait_finished,
)
from tests.support.run_ports import free_run_ports

ROOT = Path(__file__).resolve().parents[2]
SWEEP = {"game": "trash_cult", "seed": 5, "games": 12, "chunk": 4, "players": [2], "max_turns": 40,
         "lineups": ["random"]}  # fmt: skip


def test_the_platform_runs_on_an_embedded_cluster(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "PROMETHEUS_URL", "REDIS_CLUSTER")}
    env |= free_run_ports() | OPERATOR_ENV | {"CULTISTS_DATA": str(tmp_path / "var")}
    log = tmp_path / "run.log"
    run = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "run", "--redis-cluster", "3"],
        env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115 - the child holds it
        start_new_session=True, cwd=ROOT,
    )  # fmt: skip
    try:
        run_file = tmp_path / "var" / "run.json"
        wait(lambda: run_file.exists() or run.poll() is not None, 240, "cultists run --redis-cluster 3")
        assert run.poll() is None, log.read_text()[-3000:]
        facts = json.loads(run_file.read_text())
        assert facts["redis_cluster"] is True
        assert facts["broker_url"] != facts["redis_url"], "Celery's broker is not the cluster"
        nodes = redis.Redis.from_url(facts["redis_url"]).execute_command("CLUSTER", "NODES").decode()
        assert sum("master" in line.split()[2].split(",") for line in nodes.splitlines()) == 3
        assert (tmp_path / "var" / "redis-cluster" / "ports.json").exists(), "data under the data folder"

        gateway = facts["gateway_url"]
        tables = []
        for game in GAMES:
            players = http(f"{gateway}/api/games/{game}")["default_players"]
            body = {"game": game, "players": players, "config": SHORT_GAMES[game],
                    "seats": [{"kind": "bot", "bot": "random"}] * players}  # fmt: skip
            tables.append(http(f"{gateway}/api/tables", body, timeout=30)["table"])
        wait_finished(gateway, tables)

        staff = staff_headers(gateway)
        sweep = http(f"{gateway}/api/sweeps", SWEEP, timeout=30, headers=staff)["id"]
        wait(
            lambda: http(f"{gateway}/api/sweeps/{sweep}", headers=staff)["status"] == "done", 240, "the sweep"
        )
        done = http(f"{gateway}/api/sweeps/{sweep}", headers=staff)
        assert done["games_done"] == done["total_games"] == SWEEP["games"], done
    finally:
        _stop(run)
