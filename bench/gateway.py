"""The gateway under load against its floor: 200 tables played at once over HTTP, and matchmaking's grouping.

Everything runs on this machine, on loopback: a real redis-server, one `cultists serve`
process per game, and the gateway under gunicorn with deploy/gunicorn.conf.py, exactly as
`cultists run` starts them. The scripted clients are one asyncio loop speaking HTTP/1.1
keep-alive (one connection per table), so the client costs as little CPU as it can on a
machine whose two cores it shares with everything it measures. Each client plays every seat
of its table the way one player's client does: a move is one POST, whose answer carries the
seat's next legal actions and whether it must decide again; only when another seat is to
act does the client ask that seat's `/legal` first. The move's round trip is the POST. A
finished table is replaced by a new one, so 200 are always in play. The run is bounded by
time and stops by itself.

In the same run, with the same Redis, engines and client, the floor (bench/floor.py: a bare
Flask app under the same gunicorn configuration, canned bodies, one gRPC call and two Redis
round trips per move) is driven at the same offered loads, so the gateway's CPU per move is
reported as a multiple of what Flask, gunicorn, gRPC and redis-py cost on their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import psutil

from bench.load import load_average
from services.engines.registry import available_games
from services.platform.matchmaking import MatchPolicy, Ticket, group_tickets
from services.runtime.embedded_redis import start_redis
from services.runtime.ports import free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[1]
TABLES = 200
WARMUP_SECONDS = 5.0
MEASURE_SECONDS = 15.0
TARGET_P99_MS = 25.0  # at half of TARGET_MOVES_PER_SECOND offered
TARGET_CPU_OVER_FLOOR = 1.5
TARGET_MOVES_PER_SECOND = 500
MATCH_TICKETS = 10_000
TARGET_MATCH_SECONDS = 1.0


class Connection:
    """A minimal HTTP/1.1 keep-alive client: JSON in, JSON out, nothing else."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        payload = orjson.dumps(body) if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(payload)}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        self.writer.write(head.encode() + b"\r\n" + payload)
        assert self.reader is not None
        # The whole head in one read (not an await per header line): the client shares the
        # two cores with the stack it measures, so its own CPU is kept small.
        lines = (await self.reader.readuntil(b"\r\n\r\n")).split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        data = await self.reader.readexactly(length)
        return status, orjson.loads(data) if data else None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class Load:
    """`interval`: seconds between one table's moves (a player's thinking time), so the
    offered load is tables / interval moves per second; 0 plays as fast as replies come."""

    def __init__(
        self, port: int, games: list[str], stop_at: float, measure_from: float, interval: float
    ) -> None:
        self.port = port
        self.interval = interval
        self.games = games
        self.stop_at = stop_at
        self.measure_from = measure_from
        self.latencies: list[float] = []
        self.moves = 0
        self.conflicts = 0
        self.errors = 0
        self.tables_finished = 0
        self.legal_requests = 0  # GET /legal asked in the measured window

    async def client(self, index: int) -> None:
        conn = Connection(self.port)
        rng = random.Random(index)
        try:
            while time.monotonic() < self.stop_at:
                await self.play_one(conn, self.games[index % len(self.games)], rng)
        finally:
            conn.close()

    async def play_one(self, conn: Connection, game: str, rng: random.Random) -> None:
        status, table = await conn.request("POST", "/api/tables", {"game": game, "decision_seconds": 3600})
        assert status == 201, table
        tid, players = table["table"], table["players"]
        tokens = []
        for seat in range(players):
            status, claim = await conn.request("POST", f"/api/tables/{tid}/seats/{seat}", {})
            assert status == 201, claim
            tokens.append(claim["token"])
        to_act = (await conn.request("GET", f"/api/tables/{tid}"))[1]["to_act"]
        legal: Any = None  # the acting seat's legal actions, when the last move's answer gave them
        next_move = time.monotonic() + rng.uniform(0, self.interval)
        while time.monotonic() < self.stop_at:
            pause = next_move - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            next_move = max(next_move + self.interval, time.monotonic())
            seat = to_act[0]
            if legal is None or legal["seat"] != seat:
                status, legal = await conn.request("GET", f"/api/tables/{tid}/legal", token=tokens[seat])
                if status != 200:
                    self.errors += 1
                    return
                if time.monotonic() >= self.measure_from:
                    self.legal_requests += 1
            choice = rng.choice(legal["legal_actions"])["id"]
            start = time.perf_counter()
            status, moved = await conn.request(
                "POST",
                f"/api/tables/{tid}/actions",
                {"action": choice, "version": legal["version"]},
                tokens[seat],
            )
            elapsed = time.perf_counter() - start
            legal = None
            if status == 409:
                self.conflicts += 1
                continue
            if status != 200:
                self.errors += 1
                return
            if time.monotonic() >= self.measure_from:
                self.latencies.append(elapsed)
                self.moves += 1
            if moved["status"] == "finished":
                self.tables_finished += 1
                return
            to_act = moved["to_act"]
            if moved.get("your_turn"):  # one request per move: the answer says what next
                legal = moved


class CpuMeter:
    """CPU seconds used by each part of the stack (a process with its children) over a
    phase, so a phase can say what one move cost each part: where the next saving is."""

    def __init__(self, parts: dict[str, int]) -> None:
        # The bench's own process counts too, without its children: those are the parts.
        self.parts = {name: (psutil.Process(pid), True) for name, pid in parts.items()}
        self.parts["bench clients"] = (psutil.Process(), False)
        self.start: dict[str, float] = {}

    def _used(self) -> dict[str, float]:
        used = {}
        for name, (proc, with_children) in self.parts.items():
            total = 0.0
            for p in [proc, *proc.children(recursive=True)] if with_children else [proc]:
                try:
                    times = p.cpu_times()
                except psutil.NoSuchProcess:
                    continue
                total += times.user + times.system
            used[name] = total
        return used

    def begin(self) -> None:
        self.start = self._used()

    def per_move_ms(self, moves: int) -> dict[str, float]:
        end = self._used()
        return {name: round((end[name] - self.start[name]) / max(moves, 1) * 1000, 3) for name in end}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _start(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        argv, cwd=ROOT, env={**os.environ, **env}, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _start_engines(games: list[str], logs: Path, procs: list[subprocess.Popen]) -> dict[str, str]:
    """One `cultists serve` per game on a free port (appended to `procs` as each starts, so
    the caller stops what did start if a later one fails); returns the gateway's
    ENGINE_ADDR_<GAME> variables."""
    env: dict[str, str] = {}
    for game in games:
        port = free_port()
        env[f"ENGINE_ADDR_{game.upper()}"] = f"127.0.0.1:{port}"
        argv = [sys.executable, "-m", "services.cli.main", "serve", game, "--port", str(port)]
        procs.append(_start(argv, {}, logs / f"{game}.log"))
        wait_for_port(port, timeout=60)
    return env


GATEWAY_APP = "services.gateway:create_app()"
FLOOR_APP = "bench.floor:create_app()"


def _gunicorn(app: str, env: dict[str, str], log: Path) -> tuple[subprocess.Popen, int]:
    """`app` under gunicorn with deploy/gunicorn.conf.py, as `cultists run` starts the gateway."""
    port = free_port()
    env = {**env, "GATEWAY_PORT": str(port)}
    proc = _start([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py", app], env, log)
    wait_for_port(port, timeout=60)
    return proc, port


def http_load(tables: int = TABLES, seconds: float = MEASURE_SECONDS) -> dict[str, Any]:
    """On one Redis and one set of engines: the floor and the gateway in turn, paced at the
    target and at half of it (latency at and below saturation), then the gateway unpaced
    (the most moves per second)."""
    games = available_games()
    redis = start_redis()
    logs = Path(tempfile.mkdtemp(prefix="cultists-bench-gateway-"))
    procs: list[subprocess.Popen] = []
    parts: dict[str, int] = {"redis": redis.process.pid}
    at_target = tables / TARGET_MOVES_PER_SECOND
    try:
        env = {"REDIS_URL": redis.url, **_start_engines(games, logs, procs)}
        parts.update({f"engine {game}": proc.pid for game, proc in zip(games, procs, strict=True)})
        env["PROMETHEUS_MULTIPROC_DIR"] = str(logs / "metrics")
        # 200 scripted players share one address here: no per-address write limit.
        env.update(
            GATEWAY_RATE_LIMIT_ADDRESS="",
            GATEWAY_RATE_LIMIT_PLAYER="",
            GATEWAY_RATE_LIMIT_GUEST="",
            GATEWAY_MAX_WAITING_TABLES="0",
        )

        # Both served at once, phases alternating floor / gateway at each rate, so each
        # ratio compares two phases a few seconds apart on the same machine (the idle one
        # costs next to nothing).
        floor, floor_port = _gunicorn(
            FLOOR_APP, {**env, "PROMETHEUS_MULTIPROC_DIR": str(logs / "floor-metrics")}, logs / "floor.log"
        )
        procs.append(floor)
        gateway, port = _gunicorn(GATEWAY_APP, env, logs / "gateway.log")
        procs.append(gateway)
        floor_meter = CpuMeter({**parts, "gateway": floor.pid})
        meter = CpuMeter({**parts, "gateway": gateway.pid})
        floor_phases: dict[str, Any] = {}
        phases: dict[str, Any] = {}
        # half the target: the latency when the stack is not saturated
        for key, interval in (("paced", at_target), ("paced_half", 2 * at_target)):
            print("  floor (bench/floor.py: bare Flask, canned bodies, 1 gRPC call + 2 Redis round trips):")
            floor_phases[key] = _phase(floor_port, games, tables, seconds, interval, floor_meter)
            print("  gateway:")
            phases[key] = _phase(port, games, tables, seconds, interval, meter)
        print("  gateway:")
        phases["unpaced"] = _phase(port, games, tables, seconds, 0.0, meter)
    finally:
        for proc in reversed(procs):
            _stop(proc)
        redis.stop()
    ratios = {
        name: round(
            phases[name]["cpu_ms_per_move"]["gateway"] / floor_phases[name]["cpu_ms_per_move"]["gateway"], 2
        )
        for name in floor_phases
    }
    print(
        "  gateway CPU per move over the floor's: "
        + ", ".join(f"{phases[n]['offered_moves_per_second']} offered {r:.2f}x" for n, r in ratios.items())
    )
    return {
        "tables": tables,
        "seconds": seconds,
        "games": games,
        "cpus": os.cpu_count(),
        # What else ran: figures from a machine busy with other work are not the stack's own.
        "load_average_at_end": load_average(),
        **phases,
        "floor": floor_phases,
        "gateway_cpu_over_floor": ratios,
    }


def _phase(
    port: int, games: list[str], tables: int, seconds: float, interval: float, meter: CpuMeter
) -> dict[str, Any]:
    now = time.monotonic()
    load = Load(port, games, now + WARMUP_SECONDS + seconds, now + WARMUP_SECONDS, interval)

    async def measure_cpu() -> None:  # over the measured window only, as the moves are
        await asyncio.sleep(max(0.0, load.measure_from - time.monotonic()))
        meter.begin()

    async def main() -> None:
        await asyncio.gather(measure_cpu(), *(load.client(i) for i in range(tables)))

    asyncio.run(main())
    if not load.latencies:
        raise RuntimeError("no move was measured")
    cpu = meter.per_move_ms(load.moves)
    p50 = statistics.median(load.latencies) * 1000
    p99 = _percentile(load.latencies, 0.99) * 1000
    rate = load.moves / seconds
    offered = f"{tables / interval:,.0f} moves/s offered" if interval else "unpaced"
    print(
        f"  {tables} tables over HTTP, {offered}: {rate:,.0f} moves/s, move round trip "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms ({load.conflicts} conflicts, {load.errors} errors, "
        f"{(load.moves + load.legal_requests) / max(load.moves, 1):.2f} requests per move)"
    )
    print("    CPU per move: " + ", ".join(f"{name} {ms:.2f} ms" for name, ms in cpu.items()))
    return {
        "offered_moves_per_second": round(tables / interval) if interval else None,
        "moves": load.moves,
        "moves_per_second": round(rate, 1),
        "move_p50_ms": round(p50, 2),
        "move_p99_ms": round(p99, 2),
        "tables_finished": load.tables_finished,
        "conflicts": load.conflicts,
        "errors": load.errors,
        "cpu_ms_per_move": cpu,
        # 1.0: every move was one request; 2.0: each also asked /legal first.
        "requests_per_move": round((load.moves + load.legal_requests) / max(load.moves, 1), 2),
    }


def matchmaking(tickets: int = MATCH_TICKETS, players: int = 4) -> dict[str, Any]:
    rng = random.Random(1)
    queue = [Ticket(str(i), rng.gauss(25.0, 8.0), rng.uniform(0.0, 60.0)) for i in range(tickets)]
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        groups = group_tickets(queue, 60.0, players, MatchPolicy())
        best = min(best, time.perf_counter() - start)
    seated = sum(len(g.tickets) for g in groups)
    print(f"  matchmaking: {tickets:,} tickets grouped in {best * 1000:.0f} ms ({len(groups)} tables)")
    return {"tickets": tickets, "seconds": round(best, 4), "tables": len(groups), "seated": seated}


def run() -> dict[str, Any]:
    load = http_load()
    match = matchmaking()
    paced, half, unpaced = load["paced"], load["paced_half"], load["unpaced"]
    return {
        "http": load,
        "matchmaking": match,
        "targets": {
            # Issue 18: the latency bound is at half the throughput target; the 500 moves/s
            # phase stays as a figure.
            f"move p99 <= {TARGET_P99_MS:g} ms at {half['offered_moves_per_second']} moves/s offered": half[
                "move_p99_ms"
            ]
            <= TARGET_P99_MS,
            f"gateway CPU per move <= {TARGET_CPU_OVER_FLOOR:g}x the floor's at "
            f"{half['offered_moves_per_second']} moves/s offered": load["gateway_cpu_over_floor"][
                "paced_half"
            ]
            <= TARGET_CPU_OVER_FLOOR,
            f">= {TARGET_MOVES_PER_SECOND} moves/s": max(
                paced["moves_per_second"], unpaced["moves_per_second"]
            )
            >= TARGET_MOVES_PER_SECOND,
            f"{MATCH_TICKETS:,} tickets grouped in < {TARGET_MATCH_SECONDS:g} s": match["seconds"]
            < TARGET_MATCH_SECONDS,
        },
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
