"""`cultists run`: the whole platform as plain processes (what `make run` starts).

Redis (REDIS_URL, or an embedded real redis-server), one gRPC engine per game, and the
parts that exist beside them, each with its log lines prefixed; Ctrl-C stops them all.
A part that dies is restarted (see services.runtime.supervisor); the data folder is
locked for the run's life (see services.runtime.run_lock).

Before anything starts, every port the run will bind is tried: a busy one is refused
at once, naming the port, the part that wanted it, what holds it and the variable that
moves it (exit status 2). A part that still cannot bind its port (taken in the
meantime) is reported as exactly that, not as a health check timing out.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import urllib.request
from pathlib import Path

from services.engines.registry import available_games
from services.platform.deal import DEAL_SECRET_ENV, kept_secret
from services.runtime import prometheus
from services.runtime.data_folder import ensure_data_dir, register_run, unregister_run
from services.runtime.embedded_cluster import form, node_argv, wait_ok
from services.runtime.embedded_redis import REDIS_NOTES, redis_argv
from services.runtime.errors import BadInput, CommandError
from services.runtime.ports import check_ports, free_port, refuse_busy
from services.runtime.run_lock import RunLock
from services.runtime.supervisor import ProcessSpec, Supervisor
from services.runtime.topology import (
    data_dir,
    engine_metrics_port,
    engine_port,
    gateway_port,
    platform_ports,
    redis_url,
    run_file,
    worker_metrics_port,
)
from services.runtime.worker_command import worker_argv

from .options import command

_ROOT = Path(__file__).resolve().parents[2]
QUEUES = ["tables", "bots", "sweeps", "tunes"]
# Celery warns at length (8 lines a worker) when its workers run as root. That warning is
# about pickle, which these workers never accept (workers/app.py: JSON only), so it is
# silenced in the children and `run` says so in one line instead (ROOT_NOTE).
_CELERY_ROOT_WARNING = "ignore:You're running the worker with superuser privileges"
ROOT_NOTE = (
    "running as root: Celery's SecurityWarning about superuser workers is silenced; it warns "
    "of pickle, which these workers never accept (JSON only). Run as a normal user for production."
)


PORTS_AND_DATA = """
Ports, each moved by its variable: the engines 50051-50053 (ENGINE_PORT_<GAME>), their
metrics 9101-9103 (ENGINE_METRICS_PORT_<GAME>), the gateway 8000 (GATEWAY_PORT), the
workers' metrics 9104-9106 (WORKER_METRICS_PORT_<QUEUE>), Prometheus 9090
(PROMETHEUS_PORT); the embedded Redis takes a free port.

The data folder: CULTISTS_DATA, else the per-user default ~/.local/share/cultists. It
holds Redis's append-only file, Prometheus's data, nights, records, reports, run.json
and deal-secret, the secret live tables' deal keys are derived from unless
CULTISTS_DEAL_SECRET gives one (docs/fairness.md, docs/cli.md).
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "run",
        "run the whole platform locally until Ctrl-C",
        description=__doc__.split("\n\n", 1)[1] + "\n" + PORTS_AND_DATA,
        environment=[
            "CULTISTS_DATA",
            "XDG_DATA_HOME",
            "REDIS_URL",
            "REDIS_CLUSTER",
            "CELERY_BROKER_URL",
            "GATEWAY_PORT",
            "ENGINE_PORT_<GAME>",
            "ENGINE_METRICS_PORT_<GAME>",
            "WORKER_METRICS_PORT_<QUEUE>",
            "PROMETHEUS_PORT",
            "CULTISTS_PURE_PYTHON",
            "CULTISTS_DEAL_SECRET",
            "CULTISTS_OPERATOR",
        ],
        miss="the platform did not come up",
    )
    p.add_argument(
        "--redis-cluster",
        type=int,
        metavar="N",
        default=0,
        help="without REDIS_URL: keep live play on an embedded Redis Cluster of N masters "
        "(1-16; data under the data folder's redis-cluster/), with Celery's broker on an "
        "embedded plain Redis beside it (default: a single embedded Redis)",
    )
    p.set_defaults(func=run)


def ports_to_check(with_prometheus: bool):
    """Every fixed port this run binds (see topology.platform_ports)."""
    return platform_ports(available_games(), QUEUES, with_prometheus)


def plan(redis: str, store_env: dict[str, str] | None = None) -> list[ProcessSpec]:
    """The processes of the platform, in start order. `store_env`: where live play keeps
    its tables when that is not `redis` alone (REDIS_CLUSTER, CELERY_BROKER_URL)."""
    py = sys.executable
    # The gateway's /metrics answers operators and this run's Prometheus, which sends it.
    metrics_token = secrets.token_urlsafe(32)
    watcher = prometheus.process_spec(metrics_token)  # None without the binary: the rest runs anyway
    warnings = ",".join(w for w in (os.environ.get("PYTHONWARNINGS"), _CELERY_ROOT_WARNING) if w)
    env = {
        "REDIS_URL": redis,
        # Children find the same data folder however the parent found it.
        "CULTISTS_DATA": str(data_dir()),
        "PYTHONWARNINGS": warnings,
        **(store_env or {}),
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
            {**env, "GATEWAY_PORT": str(gateway_port()), "GATEWAY_METRICS_TOKEN": metrics_token},
        ),
        _worker("tables", "WARNING", env),
        # Tables of bots only, on workers of their own: a human's bots never wait behind them.
        _worker("bots", "WARNING", env),
        # Balance sweeps: simulation chunks, in-process with the rules library.
        _worker("sweeps", "INFO", env),
        # Tune drivers: each proposes configs and waits on the sweeps it queues (hours, mostly idle).
        _worker("tunes", "INFO", env),
        ProcessSpec(
            "beat",
            [py, "-m", "celery", "-A", "workers.app", "beat", "--loglevel", "WARNING",
             "-s", str(data_dir() / "celerybeat-schedule")],
            env,
        ),
    ]  # fmt: skip
    return specs + ([watcher] if watcher else [])


def run(args: argparse.Namespace) -> int:
    folder = ensure_data_dir()
    os.environ["CULTISTS_DATA"] = str(folder)  # one folder for this process and its children
    lock = RunLock(folder)
    leftovers = lock.acquire()  # FolderLocked: one line naming the run that holds it
    registered = register_run(folder)
    facts: dict = {}
    sup = Supervisor(run_id=lock.run_id, on_change=lambda: _write_run_file(facts, sup))
    try:
        # Every port, before anything starts (a few milliseconds; /proc is read only
        # for a busy one, to name its holder).
        refuse_busy(check_ports(ports_to_check(prometheus.binary() is not None)))
        # One deal secret for every process of this platform (docs/fairness.md): kept in
        # the data folder, unless CULTISTS_DEAL_SECRET names one. Made only once the ports
        # are known free: a refused run leaves nothing behind.
        os.environ.setdefault(DEAL_SECRET_ENV, kept_secret(folder))
        if leftovers:
            sup.say("run", f"the last run (pid {lock.previous.get('pid')}) was killed; stopped its "
                    f"{len(leftovers)} leftover processes")  # fmt: skip
        sup.say("run", f"data folder: {folder}")
        if os.geteuid() == 0:
            sup.say("run", ROOT_NOTE)
        url = redis_url()
        store_env: dict[str, str] = {}
        if url is None:
            url = _embedded_redis(sup, "redis", folder / "redis")
            if args.redis_cluster:
                store_env = {
                    "CELERY_BROKER_URL": url,
                    "REDIS_URL": _embedded_cluster(sup, args.redis_cluster),
                    "REDIS_CLUSTER": "true",
                }
        else:
            sup.say("run", f"using REDIS_URL={url}")
        specs = plan(url, store_env)
        prom_url = prometheus.url() if any(s.name == "prometheus" for s in specs) else None
        if prom_url is None:
            sup.say("run", prometheus.MISSING_NOTE)
        for spec in specs:
            sup.start(spec)
        for game in available_games():
            sup.wait_until_listening(game, engine_port(game))
            sup.say("run", f"{game} engine ready on 127.0.0.1:{engine_port(game)}")
        sup.wait_until_listening("gateway", gateway_port())
        # The master listens at once; its workers load the app for seconds more. "Up"
        # means a request is answered.
        sup.wait_until("gateway", _gateway_answers, "answering /healthz")
        _first_operator(sup, store_env.get("REDIS_URL", url), bool(store_env))
        facts.update(_facts(url, prom_url, store_env))  # from now on the run file says the platform is up
        _write_run_file(facts, sup)
        sup.say("run", f"lobby: http://127.0.0.1:{gateway_port()}/  (API: /api/openapi.json)")
        if prom_url is not None:
            sup.say("run", f"dashboards: http://127.0.0.1:{gateway_port()}/ops  (Prometheus: {prom_url})")
        sup.say("run", "platform is up; `cultists status` checks it; Ctrl-C stops it")
        return sup.wait()
    except CommandError as exc:  # a busy port (before or while starting): the line says which
        if sup.parts:
            sup.say("run", f"the platform did not come up: {exc}; stopping everything")
        raise
    except (TimeoutError, RuntimeError) as exc:
        sup.say("run", f"the platform did not come up: {exc}; stopping everything")
        return 1
    finally:
        facts.clear()
        run_file().unlink(missing_ok=True)
        sup.stop_all()
        unregister_run(registered)
        lock.release()


def _first_operator(sup: Supervisor, redis: str, cluster: bool) -> None:
    """CULTISTS_OPERATOR=name:password makes that account an operator (made if new; an
    existing one keeps its password), so a fresh platform has someone who may read /ops
    and grant roles without a second command (docs/cli.md)."""
    raw = os.environ.get("CULTISTS_OPERATOR", "")
    if not raw:
        return
    name, _, password = raw.partition(":")
    from services.platform.errors import PlatformError
    from services.platform.players import PlayerBook
    from services.runtime.redis_client import connect

    book = PlayerBook(connect(redis, cluster), 0)
    try:
        if book.by_username(name) is None:
            book.create_account(name, password, "operator")
        else:
            book.grant(name, "operator")
    except PlatformError as exc:
        raise BadInput(f"CULTISTS_OPERATOR: {exc.message}") from None
    sup.say("run", f"operator account: {name} (from CULTISTS_OPERATOR)")


def _embedded_redis(sup: Supervisor, name: str, directory: Path) -> str:
    """A supervised redis-server like the other parts: restarted on the same port from its
    append-only file, and stopped only after everything that writes to it."""
    directory.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    sup.start(ProcessSpec(name, redis_argv(port, directory, persist=True), stop_last=True, notes=REDIS_NOTES))
    sup.wait_until_listening(name, port, timeout=30)
    sup.say("run", f"embedded redis-server on {url} (data in {directory})")
    return url


def _embedded_cluster(sup: Supervisor, masters: int) -> str:
    """An embedded Redis Cluster of `masters` supervised nodes under the data folder. Its
    nodes keep their ports (redis-cluster/ports.json) so a later run finds the cluster its
    nodes.conf files describe; a first run forms it."""
    if not 1 <= masters <= 16:
        raise RuntimeError("--redis-cluster takes 1 to 16 masters")
    root = data_dir() / "redis-cluster"
    root.mkdir(parents=True, exist_ok=True)
    ports_file = root / "ports.json"
    known = json.loads(ports_file.read_text()) if ports_file.exists() else []
    if len(known) != masters:
        shutil.rmtree(root)
        root.mkdir(parents=True)
        known = [[free_port(), free_port()] for _ in range(masters)]
        ports_file.write_text(json.dumps(known))
    for i, (port, bus) in enumerate(known):
        directory = root / f"node-{i}"
        directory.mkdir(exist_ok=True)
        sup.start(
            ProcessSpec(f"redis-node-{i}", node_argv(port, bus, directory, persist=True), stop_last=True)
        )
        sup.wait_until_listening(f"redis-node-{i}", port, timeout=30)
    form([(port, bus) for port, bus in known])
    wait_ok([port for port, _ in known])
    url = f"redis://127.0.0.1:{known[0][0]}/0"
    sup.say("run", f"embedded Redis Cluster of {masters} masters at {url} (data in {root})")
    return url


def _gateway_answers() -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{gateway_port()}/healthz", timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


def _facts(url: str, prom_url: str | None, store_env: dict[str, str]) -> dict:
    """What `cultists status` and the tools read from the run file."""
    return {
        "redis_url": store_env.get("REDIS_URL", url),
        "redis_cluster": bool(store_env.get("REDIS_CLUSTER")),
        "broker_url": url,
        "gateway_url": f"http://127.0.0.1:{gateway_port()}",
        "engines": {g: f"127.0.0.1:{engine_port(g)}" for g in available_games()},
        "metrics": {
            **{f"engine {g}": engine_metrics_port(g) for g in available_games()},
            "gateway": gateway_port(),
            "worker sweeps": worker_metrics_port("sweeps"),
            "worker tables": worker_metrics_port("tables"),
            "worker bots": worker_metrics_port("bots"),
            "worker tunes": worker_metrics_port("tunes"),
        },
        "prometheus_url": prom_url,
        "pid": os.getpid(),
    }


def _write_run_file(facts: dict, sup: Supervisor) -> None:
    """The run file with each part's state, rewritten whenever a part starts or exits
    (atomically: status may read it at any moment). Nothing before the facts are known."""
    if not facts:
        return
    body = {**facts, "parts": {p.spec.name: p.summary() for p in sup.parts}}
    tmp = run_file().with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2))
    tmp.replace(run_file())


def _worker(queue: str, loglevel: str, env: dict[str, str]) -> ProcessSpec:
    """A Celery worker for one queue, with its own metrics port and multiprocess directory."""
    return ProcessSpec(
        queue,
        worker_argv(queue, name=f"{queue}@%h", loglevel=loglevel),
        {**env, "WORKER_METRICS_PORT": str(worker_metrics_port(queue)),
         "PROMETHEUS_MULTIPROC_DIR": str(_fresh_dir(data_dir() / f"metrics-{queue}"))},
    )  # fmt: skip


def _fresh_dir(path: Path) -> Path:
    """An empty directory: multiprocess metrics files left by a previous run would count twice."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
