"""A flood of writes from one address against the write rate limits (issue 15).

The stack of `bench/gateway.py` (redis-server, one engine process per game, gunicorn with
deploy/gunicorn.conf.py), with the gateway's default rate limits on. Honest players play
tables at a steady pace, each from its own loopback address (127.0.1.x): first alone (the
baseline), then while one address (127.0.0.9) sends table-opening POSTs as fast as a pool of
keep-alive connections can. Figures: the flood's requests refused (429) and let through per
second, and the players' move round-trip p99 in both runs; the target is p99 under the
flood within 2x of the baseline.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from services.engines.registry import available_games
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import free_port, wait_for_port

from .gateway import Connection, Load, _percentile, _start, _start_engines, _stop

PLAYER_TABLES = 40
PLAYER_INTERVAL = 0.2  # seconds between one table's moves: 200 moves/s offered in all
FLOOD_CONNECTIONS = 16
WARMUP_SECONDS = 4.0
MEASURE_SECONDS = 15.0
TARGET_P99_RATIO = 2.0
# Writes one address may make here: below what the flood can send on a busy 2-core
# machine, above a player's pace (one move every PLAYER_INTERVAL, 5 writes/s).
ADDRESS_LIMIT = "10/second"


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

    async def main() -> None:
        tasks = [players.client(i) for i in range(PLAYER_TABLES)]
        if flood:
            tasks += [flooder.client() for _ in range(FLOOD_CONNECTIONS)]
        await asyncio.gather(*tasks)

    asyncio.run(main())
    if not players.latencies:
        raise RuntimeError("no move was measured")
    out: dict[str, Any] = {
        "moves_per_second": round(players.moves / MEASURE_SECONDS, 1),
        "move_p50_ms": round(_percentile(players.latencies, 0.5) * 1000, 2),
        "move_p99_ms": round(_percentile(players.latencies, 0.99) * 1000, 2),
        "player_errors": players.errors,
    }
    if flood:
        out.update(
            flood_refused_per_second=round(flooder.refused / MEASURE_SECONDS, 1),
            flood_accepted_per_second=round(flooder.accepted / MEASURE_SECONDS, 1),
            flood_other=flooder.other,
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
    procs = []
    try:
        env = {"REDIS_URL": redis.url, **_start_engines(games, logs, procs)}
        gateway_port = free_port()
        env.update(
            GATEWAY_PORT=str(gateway_port),
            PROMETHEUS_MULTIPROC_DIR=str(logs / "metrics"),
            GATEWAY_RATE_LIMIT_ADDRESS=ADDRESS_LIMIT,
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
        "address_limit": ADDRESS_LIMIT,
        "seconds": MEASURE_SECONDS,
        "baseline": baseline,
        "flooded": flooded,
        "p99_ratio": round(ratio, 2),
        "cpus": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "targets": {
            f"players' move p99 under a one-address flood <= {TARGET_P99_RATIO:g}x unflooded": ratio
            <= TARGET_P99_RATIO,
            "the flood is refused (429)": flooded["flood_refused_per_second"] > 0,
        },
    }
