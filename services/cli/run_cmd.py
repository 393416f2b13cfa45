"""`cultists run`: the whole platform as plain processes (what `make run` starts).

Redis (REDIS_URL, or an embedded real redis-server), one gRPC engine per game, and the
parts that exist beside them, each with its log lines prefixed; Ctrl-C stops them all.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from services.engines.registry import available_games
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import wait_for_port
from services.runtime.supervisor import ProcessSpec, Supervisor
from services.runtime.topology import ENGINE_METRICS_PORTS, ENGINE_PORTS, GATEWAY_PORT, redis_url

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
        # bot moves and matchmaking, and beat, which enforces seat deadlines every second.
        ProcessSpec(
            "gateway",
            [py, "-m", "gunicorn", "-c", str(_ROOT / "deploy" / "gunicorn.conf.py"), "services.gateway:create_app()"],
            {**env, "GATEWAY_PORT": str(GATEWAY_PORT)},
        ),
        ProcessSpec(
            "tables",
            [py, "-m", "celery", "-A", "workers.app", "worker", "-Q", "tables", "-c", "2", "-n", "tables@%h",
             "--without-gossip", "--without-mingle", "--loglevel", "INFO"],
            env,
        ),
        ProcessSpec(
            "beat",
            [py, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "INFO",
             "-s", str(_data_dir().parent / "celerybeat-schedule")],
            env,
        ),
    ]  # fmt: skip
    return specs


def run(args: argparse.Namespace) -> int:
    sup = Supervisor()
    url = redis_url()
    embedded = None
    if url is None:
        embedded = start_redis(persist=True, data_dir=_data_dir())
        url = embedded.url
        sup.say("run", f"embedded redis-server on {url} (data in {_data_dir()})")
    else:
        sup.say("run", f"using REDIS_URL={url}")
    try:
        for spec in plan(url):
            sup.start(spec)
        for game in available_games():
            wait_for_port(ENGINE_PORTS[game], timeout=60)
            sup.say("run", f"{game} engine ready on 127.0.0.1:{ENGINE_PORTS[game]}")
        wait_for_port(GATEWAY_PORT, timeout=60)
        sup.say("run", f"lobby: http://127.0.0.1:{GATEWAY_PORT}/api/tables (API: /api/openapi.json)")
        sup.say("run", "platform is up; Ctrl-C stops it")
        return sup.wait()
    finally:
        sup.stop_all()
        if embedded is not None:
            embedded.stop()
            sup.say("run", "embedded redis stopped")


def _data_dir():
    from pathlib import Path

    path = Path(os.environ.get("CULTISTS_DATA", "var/redis")).resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path
