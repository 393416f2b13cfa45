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
from services.runtime import prometheus
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import wait_for_port
from services.runtime.supervisor import ProcessSpec, Supervisor
from services.runtime.topology import (
    data_dir,
    engine_metrics_port,
    engine_port,
    gateway_port,
    redis_url,
    run_file,
    worker_metrics_port,
)

_ROOT = Path(__file__).resolve().parents[2]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the whole platform locally until Ctrl-C")
    p.set_defaults(func=run)


def plan(redis: str) -> list[ProcessSpec]:
    """The processes of the platform, in start order."""
    py = sys.executable
    watcher = prometheus.process_spec()  # None without the binary: the rest runs anyway
    env = {
        "REDIS_URL": redis,
        **{f"ENGINE_ADDR_{g.upper()}": f"127.0.0.1:{engine_port(g)}" for g in available_games()},
        **({"PROMETHEUS_URL": prometheus.url()} if watcher else {}),
    }
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
                str(engine_port(game)),
                "--metrics-port",
                str(engine_metrics_port(game)),
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
            {**env, "GATEWAY_PORT": str(gateway_port())},
        ),
        _worker("tables", "WARNING", env),
        # Balance sweeps: simulation chunks, in-process with the rules library.
        _worker("sweeps", "INFO", env),
        ProcessSpec(
            "beat",
            [py, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "WARNING",
             "-s", str(data_dir() / "celerybeat-schedule")],
            env,
        ),
    ]  # fmt: skip
    return specs + ([watcher] if watcher else [])


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
        specs = plan(url)
        prom_url = prometheus.url() if any(s.name == "prometheus" for s in specs) else None
        if prom_url is None:
            sup.say("run", prometheus.MISSING_NOTE)
        for spec in specs:
            sup.start(spec)
        for game in available_games():
            wait_for_port(engine_port(game), timeout=60)
            sup.say("run", f"{game} engine ready on 127.0.0.1:{engine_port(game)}")
        wait_for_port(gateway_port(), timeout=60)
        run_file().write_text(
            json.dumps(
                {
                    "redis_url": url,
                    "gateway_url": f"http://127.0.0.1:{gateway_port()}",
                    "engines": {g: f"127.0.0.1:{engine_port(g)}" for g in available_games()},
                    "metrics": {
                        **{f"engine {g}": engine_metrics_port(g) for g in available_games()},
                        "gateway": gateway_port(),
                        "worker sweeps": worker_metrics_port("sweeps"),
                        "worker tables": worker_metrics_port("tables"),
                    },
                    "prometheus_url": prom_url,
                    "pid": os.getpid(),
                },
                indent=2,
            )
        )
        sup.say("run", f"lobby: http://127.0.0.1:{gateway_port()}/  (API: /api/openapi.json)")
        if prom_url is not None:
            sup.say("run", f"dashboards: http://127.0.0.1:{gateway_port()}/ops  (Prometheus: {prom_url})")
        sup.say("run", "platform is up; `cultists status` checks it; Ctrl-C stops it")
        return sup.wait()
    finally:
        run_file().unlink(missing_ok=True)
        sup.stop_all()
        if embedded is not None:
            embedded.stop()
            sup.say("run", "embedded redis stopped")


def _worker(queue: str, loglevel: str, env: dict[str, str]) -> ProcessSpec:
    """A Celery worker for one queue, with its own metrics port and multiprocess directory."""
    return ProcessSpec(
        queue,
        [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", queue, "-c", "2",
         "-n", f"{queue}@%h", "--without-gossip", "--without-mingle", "--loglevel", loglevel],
        {**env, "WORKER_METRICS_PORT": str(worker_metrics_port(queue)),
         "PROMETHEUS_MULTIPROC_DIR": str(_fresh_dir(data_dir() / f"metrics-{queue}"))},
    )  # fmt: skip


def _fresh_dir(path: Path) -> Path:
    """An empty directory: multiprocess metrics files left by a previous run would count twice."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
