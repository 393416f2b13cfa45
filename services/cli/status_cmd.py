"""`cultists status`: which parts of the platform are up, each checked the way it is used.

Redis answers PING; each engine's standard gRPC health service says SERVING; the gateway's
/healthz says ok; Celery workers answer a control ping (with the queues they consume);
Prometheus's /-/ready says ready, when a local run or PROMETHEUS_URL names one (a run without
the binary, or none known, is a line that does not count as down).
It also says how the engines run from this tree ("engines build": compiled, or
"interpreted: build stale" after an engine source changed since `make compile`), a note
that never counts as down.
Exit status 0 only when every part is up, 1 when one is down, so scripts can wait on it.
Under `cultists run` it also lists each supervised process with its uptime and restarts
(from the run file), and a part the supervisor gave up on counts as down.

It checks the platform it finds (the running `cultists run` of the data folder, or what
REDIS_URL and the address variables name), never a guess: with neither, it says there is
no running platform (exit status 3) instead of probing default ports. `--json` prints the
same as one JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request

from services.engines import build_state
from services.engines.registry import available_games
from services.runtime.errors import BadInput
from services.runtime.topology import (
    data_dir,
    engine_address,
    gateway_url,
    platform_redis_url,
    prometheus_url,
    read_run_file,
)

from .common import no_platform
from .options import add_json, add_redis_url, command

TIMEOUT = 2.0


class Note(str):
    """A fact beside the checks (how the engines run): printed, never up or down."""


Check = tuple[str, tuple[bool, str] | str | None]


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "status",
        "report which parts of the platform are up",
        description=__doc__.split("\n\n", 1)[1],
        environment=[
            "CULTISTS_DATA",
            "REDIS_URL",
            "GATEWAY_URL",
            "ENGINE_ADDR_<GAME>",
            "PROMETHEUS_URL",
        ],
        miss="a part is down",
    )
    add_redis_url(p)
    p.add_argument(
        "--gateway",
        default=None,
        metavar="URL",
        help="gateway base URL (default: $GATEWAY_URL, else the run's)",
    )
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
    add_json(p, "print the checks as one JSON document")
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

    from services.platform.engine_channels import open_channel

    address = address or engine_address(game)
    try:
        channel = open_channel(address)
    except (ValueError, OSError) as exc:  # not host:port, or a name that does not resolve
        return False, f"{address}: {exc}"
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]  # typeshed's HealthStub omits Check
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
    checks: list[Check] = []
    if args.engine:
        for item in args.engine:
            game, _, address = item.partition("=")
            if game not in available_games():
                raise BadInput(
                    f"--engine {item!r}: no installed game {game!r} ({', '.join(available_games())})"
                )
            checks.append((f"engine {game}", check_engine(game, address or None)))
        return _report(checks, args.json)
    facts = read_run_file()
    url = args.redis_url or platform_redis_url()
    if not facts and not url and not args.gateway and not os.environ.get("GATEWAY_URL"):
        raise no_platform(", or name its parts with --gateway, --engine")
    checks.append(("redis", check_redis(url) if url else None))
    checks += [(f"engine {game}", check_engine(game)) for game in available_games()]
    checks.append(("engines build", Note(build_state())))
    checks.append(("gateway", check_gateway(args.gateway or gateway_url())))
    checks.append(("workers", check_workers(url) if url else None))
    prometheus = args.prometheus or prometheus_url()
    if prometheus:
        checks.append(("prometheus", check_prometheus(prometheus)))
    elif "prometheus_url" in facts:
        checks.append(("prometheus", "not started: this run found no prometheus binary"))
    else:
        checks.append(("prometheus", "not checked: no local run and no PROMETHEUS_URL"))
    checks += supervised_parts(facts)
    return _report(checks, args.json)


def supervised_parts(facts: dict) -> list[Check]:
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
    rows: list[Check] = []
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


def _report(checks: list[Check], as_json: bool = False) -> int:
    """One line per part (or one JSON document); a Note is a fact shown as it is, a plain
    string (any other) is a part this run chose
    not to start (no failure), None a part that could not be checked (counts as down)."""
    rows = []
    for name, result in checks:
        if isinstance(result, Note):
            rows.append({"part": name, "state": "note", "detail": str(result)})
        elif isinstance(result, str):
            rows.append({"part": name, "state": "skipped", "detail": result})
        elif result is None:
            rows.append(
                {"part": name, "state": "unknown", "detail": "not checked: set REDIS_URL or pass --redis-url"}
            )
        else:
            rows.append({"part": name, "state": "up" if result[0] else "down", "detail": result[1]})
    all_up = all(r["state"] in ("up", "skipped", "note") for r in rows)
    if as_json:
        doc = {"all_up": all_up, "data_folder": str(data_dir()), "parts": rows}
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0 if all_up else 1
    width = max(len(r["part"]) for r in rows)
    marks = {"up": "up  ", "down": "DOWN", "skipped": "-   ", "unknown": "?   ", "note": "    "}
    for r in rows:
        print(f"{r['part']:<{width}}  {marks[r['state']]}  {r['detail']}")
    return 0 if all_up else 1
