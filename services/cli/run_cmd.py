"""`cultists run`: the whole platform as plain processes (what `make run` starts).

Redis (REDIS_URL, or an embedded real redis-server), one gRPC engine per game, and the
parts that exist beside them, each with its log lines prefixed; Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from services.engines.registry import available_games
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import wait_for_port
from services.runtime.supervisor import ProcessSpec, Supervisor
from services.runtime.topology import (
    ENGINE_METRICS_PORTS,
    ENGINE_PORTS,
    GATEWAY_PORT,
    WORKER_METRICS_PORT,
    data_dir,
    redis_url,
    run_file,
)

_ROOT = Path(__file__).resolve().parents[2]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the whole platform locally until Ctrl-C")
    p.set_defaults(func=run)


def plan(redis: str) -> list[ProcessSpec]:
    """The processes of the platform, in start order."""
    py = sys.executable
    env = {"REDIS_URL": redis}
    specs = [
        ProcessSpec(
            game,
            [
                py,
                "-m",
                "services.cli.main",
                "serve",
                game,
                "--port",
                str(ENGINE_PORTS[game]),
                "--metrics-port",
                str(ENGINE_METRICS_PORTS[game]),
            ],
            env,
        )
        for game in available_games()
    ]
    specs += [
        # The gateway under gunicorn (never Flask's dev server), a worker for live tables'
        # bot moves and matchmaking, and beat, which enforces seat deadlines every second
        # (both log at WARNING: at INFO that once-a-second sweep drowns everything else).
        ProcessSpec(
            "gateway",
            [py, "-m", "gunicorn", "-c", str(_ROOT / "deploy" / "gunicorn.conf.py"), "services.gateway:create_app()"],
            {**env, "GATEWAY_PORT": str(GATEWAY_PORT)},
        ),
        ProcessSpec(
            "tables",
            [py, "-m", "celery", "-A", "workers.app", "worker", "-Q", "tables", "-c", "2", "-n", "tables@%h",
             "--without-gossip", "--without-mingle", "--loglevel", "WARNING"],
            env,
        ),
        # Balance sweeps: simulation chunks, in-process with the rules library.
        ProcessSpec(
            "sweeps",
            [py, "-m", "celery", "-A", "workers.app", "worker", "-Q", "sweeps", "-c", "2", "-n", "sweeps@%h",
             "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
            {**env, "WORKER_METRICS_PORT": str(WORKER_METRICS_PORT),
             "PROMETHEUS_MULTIPROC_DIR": str(_fresh_dir(data_dir() / "metrics-sweeps"))},
        ),
        ProcessSpec(
            "beat",
            [py, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "WARNING",
             "-s", str(data_dir() / "celerybeat-schedule")],
            env,
        ),
    ]  # fmt: skip
    return specs


def run(args: argparse.Namespace) -> int:
    sup = Supervisor()
    url = redis_url()
    embedded = None
    if url is None:
        redis_dir = data_dir() / "redis"
        redis_dir.mkdir(exist_ok=True)
        embedded = start_redis(persist=True, data_dir=redis_dir)
        url = embedded.url
        sup.say("run", f"embedded redis-server on {url} (data in {redis_dir})")
    else:
        sup.say("run", f"using REDIS_URL={url}")
    try:
        for spec in plan(url):
            sup.start(spec)
        for game in available_games():
            wait_for_port(ENGINE_PORTS[game], timeout=60)
            sup.say("run", f"{game} engine ready on 127.0.0.1:{ENGINE_PORTS[game]}")
        wait_for_port(GATEWAY_PORT, timeout=60)
        run_file().write_text(
            json.dumps(
                {
                    "redis_url": url,
                    "gateway_url": f"http://127.0.0.1:{GATEWAY_PORT}",
                    "engines": {g: f"127.0.0.1:{ENGINE_PORTS[g]}" for g in available_games()},
                    "pid": os.getpid(),
                },
                indent=2,
            )
        )
        sup.say("run", f"lobby: http://127.0.0.1:{GATEWAY_PORT}/  (API: /api/openapi.json)")
        sup.say("run", "platform is up; `cultists status` checks it; Ctrl-C stops it")
        return sup.wait()
    finally:
        run_file().unlink(missing_ok=True)
        sup.stop_all()
        if embedded is not None:
            embedded.stop()
            sup.say("run", "embedded redis stopped")


def _fresh_dir(path: Path) -> Path:
    """An empty directory: multiprocess metrics files left by a previous run would count twice."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
