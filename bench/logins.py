"""Bad sign-ins beside other requests (issue 27, item 5): `GET /api/games` p99 alone, then
while 8 clients send wrong passwords as fast as they can.

The stack of `bench/gateway.py` (redis-server, one engine per game, gunicorn with gevent,
deploy/gunicorn.conf.py). Each bad sign-in names a fresh username, so every one costs a
full Argon2 verification (the dummy hash: the per-account throttle never answers for it)
and none is refused by the write limits (switched off: the clients share 127.0.0.1, and
stand for many addresses). The hashing runs in each gateway worker's low-priority hashing
process (services/gateway/hashing.py), at most HASHING_SLOTS at once on the host and on
HASHING_SLOTS of its cores, so a probe of `/api/games` should not wait behind it: the target is its p99 under the bad sign-ins within 2x of its p99 alone. A second
target keeps that honest: the bad sign-ins must still be answered (401s, not only 503
`busy` or timeouts), or the ratio would only say that hashing starved.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from services.engines.registry import available_games
from services.platform.passwords import HASHING_SLOTS
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import free_port, wait_for_port

from .flood import _wait_ready
from .gateway import _percentile, _start, _start_engines, _stop

BAD_CLIENTS = 8
MEASURE_SECONDS = 20.0  # each p99 from ~1,500 probes: at 10 s (~800) it moved 2x between runs
TARGET_P99_RATIO = 2.0
# Checked sign-ins (401) a second the flood must still get while it is measured.
TARGET_CHECKED_PER_SECOND = 1.0


def _probe(base: str, seconds: float) -> list[float]:
    """`GET /api/games` one after another for `seconds`; each round trip in ms."""
    took: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        start = time.perf_counter()
        with urllib.request.urlopen(f"{base}/api/games", timeout=30) as reply:
            reply.read()
        took.append((time.perf_counter() - start) * 1000)
        time.sleep(0.01)
    return took


def _bad_sign_ins(base: str, stop: threading.Event, counts: list[int]) -> None:
    while not stop.is_set():  # a 503 `busy` (hashing full) is answered at once: try again
        body = json.dumps({"username": f"nobody-{secrets.token_hex(6)}", "password": "not the password"})
        request = urllib.request.Request(
            f"{base}/api/sessions", data=body.encode(), headers={"Content-Type": "application/json"}
        )
        try:
            urllib.request.urlopen(request, timeout=60).read()
        except urllib.error.HTTPError as exc:
            exc.read()
            counts.append(exc.code)
        except OSError:
            counts.append(0)  # a timeout or a dropped connection: counted, not fatal


def run() -> dict[str, Any]:
    games = available_games()
    redis = start_redis()
    logs = Path(tempfile.mkdtemp(prefix="cultists-bench-logins-"))
    procs: list[subprocess.Popen] = []
    try:
        env = {"REDIS_URL": redis.url, **_start_engines(games, logs, procs)}
        port = free_port()
        env.update(
            GATEWAY_PORT=str(port),
            PROMETHEUS_MULTIPROC_DIR=str(logs / "metrics"),
            GATEWAY_RATE_LIMIT_ADDRESS="",
            GATEWAY_RATE_LIMIT_PLAYER="",
            GATEWAY_RATE_LIMIT_GUEST="",
        )
        gunicorn = [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "services.gateway:create_app()",
        ]
        procs.append(_start(gunicorn, env, logs / "gateway.log"))
        wait_for_port(port, timeout=60)
        _wait_ready(port)
        base = f"http://127.0.0.1:{port}"
        _probe(base, 2.0)  # warm up
        idle = _probe(base, MEASURE_SECONDS)
        stop, counts = threading.Event(), list[int]()
        clients = [
            threading.Thread(target=_bad_sign_ins, args=(base, stop, counts)) for _ in range(BAD_CLIENTS)
        ]
        for client in clients:
            client.start()
        time.sleep(1.0)
        before = len(counts)
        loaded = _probe(base, MEASURE_SECONDS)
        during = counts[before:]
        bad_per_second = len(during) / MEASURE_SECONDS
        checked_per_second = during.count(401) / MEASURE_SECONDS
        stop.set()
        for client in clients:
            client.join(timeout=60)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    idle_p99, loaded_p99 = _percentile(idle, 0.99), _percentile(loaded, 0.99)
    ratio = loaded_p99 / max(idle_p99, 1e-9)
    return {
        "bad_clients": BAD_CLIENTS,
        "seconds": MEASURE_SECONDS,
        "idle_p99_ms": round(idle_p99, 2),
        "idle_p50_ms": round(_percentile(idle, 0.5), 2),
        "loaded_p99_ms": round(loaded_p99, 2),
        "loaded_p50_ms": round(_percentile(loaded, 0.5), 2),
        "bad_sign_ins_per_second": round(bad_per_second, 1),
        "checked_sign_ins_per_second": round(checked_per_second, 1),
        "answers": {str(code): counts.count(code) for code in sorted(set(counts))},
        "p99_ratio": round(ratio, 2),
        "cpus": os.cpu_count(),
        "hashing_slots": HASHING_SLOTS,  # hashes at once on the host (passwords.py)
        "targets": {
            f"GET /api/games p99 under {BAD_CLIENTS} bad sign-in clients <= {TARGET_P99_RATIO:g}x idle": ratio
            <= TARGET_P99_RATIO,
            f"bad sign-ins still checked (401) >= {TARGET_CHECKED_PER_SECOND:g}/s": checked_per_second
            >= TARGET_CHECKED_PER_SECOND,
        },
    }
