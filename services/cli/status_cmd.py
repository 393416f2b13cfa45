"""`cultists status`: which parts of the platform are up, each checked the way it is used.

Redis answers PING; each engine's standard gRPC health service says SERVING; the gateway's
/healthz says ok; Celery workers answer a control ping (with the queues they consume);
Prometheus's /-/ready says ready, when a local run or PROMETHEUS_URL names one (a run without
the binary, or none known, is a line that does not count as down).
Exit status 0 only when every part is up, so scripts can wait on it. Under `cultists run`
it also lists each supervised process with its uptime and restarts (from the run file),
and a part the supervisor gave up on counts as down.
"""

from __future__ import annotations

import argparse
import json
import os
import time
import urllib.error
import urllib.request

from services.engines.registry import available_games
from services.runtime.topology import engine_address, gateway_url, prometheus_url, read_run_file, redis_url

TIMEOUT = 2.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="report which parts of the platform are up")
    p.add_argument("--redis-url", default=None, help="Redis (default: REDIS_URL)")
    p.add_argument("--gateway", default=None, help="gateway base URL (default: GATEWAY_URL or :8000)")
    p.add_argument(
        "--prometheus", default=None, help="Prometheus base URL (default: PROMETHEUS_URL or the run's)"
    )
    p.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="GAME=HOST:PORT",
        help="check only these engines (repeatable); what a container health check runs",
    )
    p.set_defaults(func=run)


def check_redis(url: str) -> tuple[bool, str]:
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT).ping()
    except redis.RedisError as exc:
        return False, str(exc)
    return True, url


def check_engine(game: str, address: str | None = None) -> tuple[bool, str]:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    address = address or engine_address(game)
    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="cultists.v1.GameEngine"), timeout=TIMEOUT
            )
        except grpc.RpcError as exc:
            return False, f"{address}: {exc.code().name}"
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return status == "SERVING", f"{address}: {status}"


def check_gateway(base: str) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(f"{base}/healthz", timeout=TIMEOUT) as reply:
            body = json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return False, f"{base}: HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        return False, f"{base}: {exc}"
    return body.get("status") == "ok", base


def check_prometheus(base: str) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(f"{base}/-/ready", timeout=TIMEOUT) as reply:
            reply.read()
    except urllib.error.HTTPError as exc:  # 503 while it replays its write-ahead log
        return False, f"{base}: HTTP {exc.code}"
    except OSError as exc:
        return False, f"{base}: {exc}"
    return True, base


def check_workers(url: str) -> tuple[bool, str]:
    from celery import Celery

    app = Celery("cultists-status", broker=url, set_as_current=False)
    try:
        queues = app.control.inspect(timeout=TIMEOUT).active_queues() or {}
    except Exception as exc:  # broker unreachable: kombu raises several kinds
        return False, str(exc)
    finally:
        app.close()
    if not queues:
        return False, "no worker answered"
    return True, "; ".join(
        f"{name} [{', '.join(q['name'] for q in qs)}]" for name, qs in sorted(queues.items())
    )


def run(args: argparse.Namespace) -> int:
    checks: list[tuple[str, tuple[bool, str] | str | None]] = []
    if args.engine:
        for item in args.engine:
            game, _, address = item.partition("=")
            checks.append((f"engine {game}", check_engine(game, address or None)))
        return _report(checks)
    url = args.redis_url or redis_url() or read_run_file().get("redis_url")
    checks.append(("redis", check_redis(url) if url else None))
    checks += [(f"engine {game}", check_engine(game)) for game in available_games()]
    checks.append(("gateway", check_gateway(args.gateway or gateway_url())))
    checks.append(("workers", check_workers(url) if url else None))
    prometheus = args.prometheus or prometheus_url()
    if prometheus:
        checks.append(("prometheus", check_prometheus(prometheus)))
    elif "prometheus_url" in read_run_file():
        checks.append(("prometheus", "not started: this run found no prometheus binary"))
    else:
        checks.append(("prometheus", "not checked: no local run and no PROMETHEUS_URL"))
    checks += supervised_parts(read_run_file())
    return _report(checks)


def supervised_parts(facts: dict) -> list[tuple[str, tuple[bool, str] | str | None]]:
    """`cultists run`'s own view of its processes: state, uptime, restarts, last exit."""
    parts = facts.get("parts") or {}
    pid = facts.get("pid")
    if not parts or not isinstance(pid, int):
        return []
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return [("supervisor", (False, f"pid {pid} is gone; the run file is stale"))]
    except PermissionError:
        pass
    rows: list[tuple[str, tuple[bool, str] | str | None]] = []
    now = time.time()
    for name, part in sorted(parts.items()):
        state = part.get("state", "?")
        detail = f"pid {part.get('pid')}, restarts {part.get('restarts', 0)}"
        if state == "running":
            detail += f", up {_duration(now - float(part.get('started_at') or now))}"
        else:
            detail = f"{state.upper()}: {detail}"
        if part.get("last_exit") is not None:
            from services.runtime.supervisor import describe_exit

            detail += f", last exit: {describe_exit(int(part['last_exit']))}"
        rows.append((f"process {name}", (state == "running", detail)))
    return rows


def _duration(seconds: float) -> str:
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _report(checks: list[tuple[str, tuple[bool, str] | str | None]]) -> int:
    """One line per part; a plain string is a part this run chose not to start (no failure)."""
    width = max(len(name) for name, _ in checks)
    all_up = True
    for name, result in checks:
        if isinstance(result, str):
            print(f"{name:<{width}}  -     {result}")
            continue
        if result is None:
            print(f"{name:<{width}}  ?     not checked: set REDIS_URL or pass --redis-url")
            all_up = False
            continue
        up, detail = result
        all_up &= up
        print(f"{name:<{width}}  {'up  ' if up else 'DOWN'}  {detail}")
    return 0 if all_up else 1
