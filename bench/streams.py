"""Many watchers on one gateway process, and one engine's calls over two replicas.

On loopback: a real redis-server, two `cultists serve` replicas of one game behind one
ENGINE_ADDR (comma-separated, round_robin), and the gateway under gunicorn with
deploy/gunicorn.conf.py and one gevent worker. Moves are timed with no stream open, then
STREAMS public event streams are opened over TABLES tables and the same moves timed again
while they are open; every stream's `update` events are counted against the moves made at
its table. Reported: the worker's Redis connections and memory per stream, move p99 with
and without the streams (issue 29's target: within 1.2x), whether every stream received
every move, and how the engine calls split between the two replicas (target 40-60%).
A short run (about 20 s on 2 cores): the streams are opened once and the moves are few.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import psutil

from services.runtime.embedded_redis import start_redis
from services.runtime.ports import free_port, wait_for_port

from .gateway import Connection, _gunicorn, _percentile, _start, _stop

GAME = "trash_cult"
STREAMS = 5000
TABLES = 100
MOVES = 300  # timed moves per phase, spread over the tables
TARGET_P99_RATIO = 1.2
TARGET_CONNECTIONS = 10
TARGET_KB_PER_STREAM = 20.0


def _redis_connections(pid: int, port: int) -> int:
    return sum(
        1
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
    )


def _engine_calls(metrics_port: int) -> float:
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    pattern = r'^cultists_engine_rpc_duration_seconds_count\{game="' + GAME + r'",method="\w+"\} (\S+)$'
    return sum(float(v) for v in re.findall(pattern, text, re.M))


async def _table(port: int) -> tuple[str, list[str]]:
    conn = Connection(port)
    try:
        _, made = await conn.request("POST", "/api/tables", {"game": GAME, "players": 2})
        tokens = [
            (await conn.request("POST", f"/api/tables/{made['table']}/seats/{s}", {}))[1]["token"]
            for s in (0, 1)
        ]
        return made["table"], tokens
    finally:
        conn.close()


async def _moves(
    port: int, tables: list[tuple[str, list[str]]], count: int, made: dict[str, int]
) -> list[float]:
    """`count` moves round the tables, one at a time, each timed (the POST's round trip)."""
    conn = Connection(port)
    times: list[float] = []
    try:
        i = 0
        while len(times) < count:
            tid, tokens = tables[i % len(tables)]
            i += 1
            _, view = await conn.request("GET", f"/api/tables/{tid}/view")
            if view["terminal"]:
                continue
            seat = view["to_act"][0]
            _, legal = await conn.request("GET", f"/api/tables/{tid}/legal", token=tokens[seat])
            move = {"action": legal["legal_actions"][0]["id"], "version": view["version"]}
            start = time.perf_counter()
            status, _ = await conn.request("POST", f"/api/tables/{tid}/actions", move, tokens[seat])
            if status == 200:
                times.append(time.perf_counter() - start)
                made[tid] = made.get(tid, 0) + 1
    finally:
        conn.close()
    return times


class _Stream:
    def __init__(self, table: str) -> None:
        self.table = table
        self.updates = 0
        self.opened = asyncio.Event()
        self.status = 0

    async def run(self, port: int, stop: asyncio.Event) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(f"GET /api/tables/{self.table}/events/stream HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            self.status = int(head.split()[1])
            if self.status != 200:
                self.opened.set()
                return
            while not stop.is_set():
                line = await reader.readline()
                if not line:
                    return
                if b"event: state" in line:
                    self.opened.set()
                elif b"event: update" in line:
                    self.updates += 1
        finally:
            self.opened.set()
            writer.close()


async def _measure(port: int, worker: psutil.Process, redis_port: int, metrics: list[int]) -> dict[str, Any]:
    tables = [await _table(port) for _ in range(TABLES)]
    made_before: dict[str, int] = {}
    await _moves(port, tables, 20, made_before)  # warm the process up
    calls_before = [_engine_calls(m) for m in metrics]
    quiet = await _moves(port, tables, MOVES, made_before)
    idle_connections = _redis_connections(worker.pid, redis_port)
    rss_before = worker.memory_info().rss

    stop = asyncio.Event()
    streams = [_Stream(tables[i % TABLES][0]) for i in range(STREAMS)]
    opening = time.monotonic()
    tasks = []
    for i, s in enumerate(streams):
        tasks.append(asyncio.create_task(s.run(port, stop)))
        if i % 200 == 199:
            await asyncio.sleep(0.05)  # a crowd arriving, not one burst of SYNs
    await asyncio.wait_for(asyncio.gather(*(s.opened.wait() for s in streams)), timeout=180)
    open_seconds = time.monotonic() - opening
    opened = sum(s.status == 200 for s in streams)
    held = _redis_connections(worker.pid, redis_port) - idle_connections
    rss_streams = worker.memory_info().rss

    made: dict[str, int] = {}
    busy = await _moves(port, tables, MOVES, made)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(
        s.updates < made.get(s.table, 0) for s in streams if s.status == 200
    ):
        await asyncio.sleep(0.2)
    missed = sum(s.updates < made.get(s.table, 0) for s in streams if s.status == 200)
    calls_after = [_engine_calls(m) for m in metrics]
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    split = [a - b for a, b in zip(calls_after, calls_before, strict=True)]
    p99_quiet, p99_busy = _percentile(quiet, 0.99) * 1000, _percentile(busy, 0.99) * 1000
    kb_per_stream = (rss_streams - rss_before) / 1024 / max(opened, 1)
    return {
        "streams": STREAMS,
        "streams_open": opened,
        "open_seconds": round(open_seconds, 1),
        "redis_connections_for_streams": held,
        "kb_per_stream": round(kb_per_stream, 1),
        "move_p99_ms_no_streams": round(p99_quiet, 1),
        "move_p99_ms_with_streams": round(p99_busy, 1),
        "p99_ratio": round(p99_busy / p99_quiet, 2),
        "streams_missing_a_move": missed,
        "engine_split": [round(c / max(sum(split), 1), 3) for c in split],
        "targets": {
            "redis_connections": held <= TARGET_CONNECTIONS,
            "kb_per_stream": kb_per_stream <= TARGET_KB_PER_STREAM,
            "p99_ratio": p99_busy <= TARGET_P99_RATIO * p99_quiet,
            "every_stream_every_move": missed == 0 and opened == STREAMS,
            "engine_split": all(0.4 <= c / max(sum(split), 1) <= 0.6 for c in split),
        },
    }


def run() -> dict[str, Any]:
    redis = start_redis()
    logs = Path(tempfile.mkdtemp(prefix="cultists-bench-streams-"))
    procs = []
    try:
        key = os.urandom(16).hex()
        addresses, metrics = [], []
        for i in range(2):
            port, metrics_port = free_port(), free_port()
            argv = [sys.executable, "-m", "services.cli.main", "serve", GAME, "--port", str(port),
                    "--metrics-port", str(metrics_port)]  # fmt: skip
            procs.append(_start(argv, {"CULTISTS_STATE_KEY": key}, logs / f"engine-{i}.log"))
            wait_for_port(port, timeout=60)
            wait_for_port(metrics_port, timeout=60)
            addresses.append(f"127.0.0.1:{port}")
            metrics.append(metrics_port)
        env = {
            "REDIS_URL": redis.url,
            f"ENGINE_ADDR_{GAME.upper()}": ",".join(addresses),
            "GATEWAY_WORKERS": "1",
            "GATEWAY_WORKER_CONNECTIONS": str(STREAMS + 1000),
            "GATEWAY_STREAM_CAP": str(STREAMS + 100),
            "GATEWAY_RATE_LIMIT_ADDRESS": "",
            "GATEWAY_RATE_LIMIT_PLAYER": "",
            "PROMETHEUS_MULTIPROC_DIR": str(logs / "metrics"),
        }
        gateway, port = _gunicorn("services.gateway:create_app()", env, logs / "gateway.log")
        procs.append(gateway)
        deadline = time.monotonic() + 60
        while not psutil.Process(gateway.pid).children() and time.monotonic() < deadline:
            time.sleep(0.2)
        [worker] = psutil.Process(gateway.pid).children()
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
                break
            except OSError:
                time.sleep(0.2)
        return asyncio.run(_measure(port, worker, redis.port, metrics))
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
