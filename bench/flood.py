"""A flood of writes from one address against the write rate limits (issue 15).

The stack of `bench/gateway.py` (redis-server, one engine process per game, gunicorn with
deploy/gunicorn.conf.py), with the gateway's default rate limits on. Honest players play
tables at a steady pace, each from its own loopback address (127.0.1.x): first alone (the
baseline), then while one address (127.0.0.9) sends table-opening POSTs as fast as a pool of
keep-alive connections can, from a process of its own (its client work in the players'
event loop made their measured latency wait for the flooder's code, not the gateway's).
Figures: the flood's requests refused (429) and let through per second, and the players'
move round-trip p99 in both runs, with each client process's CPU; the target is p99 under
the flood within 2x of the baseline. On one 2-core machine the flooder competes with the
stack for CPU, as a real attacker would not: `BENCH_FLOOD_NICE` runs it niced.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from multiprocessing.connection import Connection as Connection_
from pathlib import Path
from typing import Any

from services.engines.registry import available_games
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import free_port, wait_for_port

from .gateway import Connection, Load, _percentile, _start, _start_engines, _stop
from .load import load_average

PLAYER_TABLES = 40
PLAYER_INTERVAL = 0.2  # seconds between one table's moves: 200 moves/s offered in all
FLOOD_CONNECTIONS = int(os.environ.get("BENCH_FLOOD_CONNECTIONS", "16"))
WARMUP_SECONDS = 4.0
MEASURE_SECONDS = 15.0
TARGET_P99_RATIO = 2.0
# Writes one address may make here: below what the flood can send on a busy 2-core
# machine, above a player's pace (one move every PLAYER_INTERVAL, 5 writes/s).
ADDRESS_LIMIT = "10/second"
# The flooder's process runs at this niceness: on this one machine it shares the two cores
# with the stack it attacks, where a real attacker spends its own CPU. 0 to compete evenly.
FLOOD_NICE = int(os.environ.get("BENCH_FLOOD_NICE", "0"))


class SourcedConnection(Connection):
    """A keep-alive connection from a chosen loopback address (every 127/8 address is
    this machine's), so the gateway sees distinct clients."""

    def __init__(self, port: int, source: str) -> None:
        super().__init__(port)
        self.source = source

    async def request(self, method: str, path: str, body: Any = None, token: str | None = None):
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                "127.0.0.1", self.port, local_addr=(self.source, 0)
            )
        return await super().request(method, path, body, token)


class Players(Load):
    """The gateway bench's players, each table from its own address."""

    async def client(self, index: int) -> None:
        conn = SourcedConnection(self.port, f"127.0.1.{index % 250 + 1}")
        rng = random.Random(index)
        try:
            while time.monotonic() < self.stop_at:
                await self.play_one(conn, self.games[index % len(self.games)], rng)
        finally:
            conn.close()


class Flood:
    """Table-opening POSTs from one address, as fast as the replies come."""

    def __init__(self, port: int, game: str, stop_at: float, measure_from: float) -> None:
        self.port, self.game = port, game
        self.stop_at, self.measure_from = stop_at, measure_from
        self.refused = self.accepted = self.other = 0

    def run(self, done: Connection_) -> None:
        """In a process of its own (`_flood_process`): the flooder's client work must not
        hold up the players' event loop, or their measured latency would include waiting
        for the attacker's own code rather than for the gateway."""
        if FLOOD_NICE:
            os.nice(FLOOD_NICE)
        cpu = time.process_time()

        async def main() -> None:
            await asyncio.gather(*(self.client() for _ in range(FLOOD_CONNECTIONS)))

        asyncio.run(main())
        done.send((self.refused, self.accepted, self.other, time.process_time() - cpu))
        done.close()

    async def client(self) -> None:
        conn = SourcedConnection(self.port, "127.0.0.9")
        try:
            while time.monotonic() < self.stop_at:
                status, _ = await conn.request("POST", "/api/tables", {"game": self.game})
                if time.monotonic() < self.measure_from:
                    continue
                if status == 429:
                    self.refused += 1
                elif status == 201:
                    self.accepted += 1
                else:
                    self.other += 1
        finally:
            conn.close()


def _run(port: int, games: list[str], flood: bool) -> dict[str, Any]:
    now = time.monotonic()
    stop_at, measure_from = now + WARMUP_SECONDS + MEASURE_SECONDS, now + WARMUP_SECONDS
    players = Players(port, games, stop_at, measure_from, PLAYER_INTERVAL)
    flooder = Flood(port, games[0], stop_at, measure_from)
    process = None
    if flood:
        context = multiprocessing.get_context("fork")
        theirs, ours = context.Pipe(duplex=False)
        process = context.Process(target=flooder.run, args=(ours,), daemon=True)
        process.start()
        ours.close()

    async def main() -> None:
        await asyncio.gather(*(players.client(i) for i in range(PLAYER_TABLES)))

    cpu = time.process_time()
    asyncio.run(main())
    players_cpu = time.process_time() - cpu
    flood_cpu = 0.0
    if process is not None:
        flooder.refused, flooder.accepted, flooder.other, flood_cpu = theirs.recv()
        process.join(timeout=30)
    if not players.latencies:
        raise RuntimeError("no move was measured")
    out: dict[str, Any] = {
        "moves_per_second": round(players.moves / MEASURE_SECONDS, 1),
        "move_p50_ms": round(_percentile(players.latencies, 0.5) * 1000, 2),
        "move_p99_ms": round(_percentile(players.latencies, 0.99) * 1000, 2),
        "player_errors": players.errors,
        "players_client_cpu_seconds": round(players_cpu, 2),
    }
    if flood:
        out.update(
            flood_refused_per_second=round(flooder.refused / MEASURE_SECONDS, 1),
            flood_accepted_per_second=round(flooder.accepted / MEASURE_SECONDS, 1),
            flood_other=flooder.other,
            flood_client_cpu_seconds=round(flood_cpu, 2),
        )
    label = "with a flood from one address" if flood else "alone"
    extra = (
        f"; flood: {out['flood_refused_per_second']:,.0f} refused/s (429), "
        f"{out['flood_accepted_per_second']:,.0f} let through/s"
        if flood
        else ""
    )
    print(
        f"  {PLAYER_TABLES} player tables {label}: {out['moves_per_second']:,.0f} moves/s, "
        f"p50 {out['move_p50_ms']:.1f} ms, p99 {out['move_p99_ms']:.1f} ms{extra}"
    )
    return out


def _wait_ready(port: int, timeout: float = 120.0) -> None:
    """Until every worker answers (the port opens before the workers have booted)."""
    deadline = time.monotonic() + timeout
    answered = 0
    while answered < 8:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                answered += 1
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def run() -> dict[str, Any]:
    games = available_games()
    redis = start_redis()
    logs = Path(tempfile.mkdtemp(prefix="cultists-bench-flood-"))
    procs: list[subprocess.Popen] = []
    try:
        env = {"REDIS_URL": redis.url, **_start_engines(games, logs, procs)}
        gateway_port = free_port()
        env.update(
            GATEWAY_PORT=str(gateway_port),
            PROMETHEUS_MULTIPROC_DIR=str(logs / "metrics"),
            GATEWAY_RATE_LIMIT_ADDRESS=ADDRESS_LIMIT,
            GATEWAY_MAX_WAITING_TABLES="0",
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
        wait_for_port(gateway_port, timeout=60)
        _wait_ready(gateway_port)
        baseline = _run(gateway_port, games, flood=False)
        flooded = _run(gateway_port, games, flood=True)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    ratio = flooded["move_p99_ms"] / max(baseline["move_p99_ms"], 1e-9)
    return {
        "player_tables": PLAYER_TABLES,
        "offered_moves_per_second": round(PLAYER_TABLES / PLAYER_INTERVAL),
        "flood_connections": FLOOD_CONNECTIONS,
        "flood_nice": FLOOD_NICE,
        "address_limit": ADDRESS_LIMIT,
        "seconds": MEASURE_SECONDS,
        "baseline": baseline,
        "flooded": flooded,
        "p99_ratio": round(ratio, 2),
        "cpus": os.cpu_count(),
        "load_average_at_end": load_average(),
        "targets": {
            f"players' move p99 under a one-address flood <= {TARGET_P99_RATIO:g}x unflooded": ratio
            <= TARGET_P99_RATIO,
            "the flood is refused (429)": flooded["flood_refused_per_second"] > 0,
        },
    }
