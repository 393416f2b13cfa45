"""gRPC Apply against an empty unary call (Ping) on the same server, in one run (issue 18
item 3): round-trip p50/p99 as a client sees them, the server-side handler time of each
(bench/timed_engine.py records every call), and the engine process's CPU per call, read
around alternating chunks of each kind.

Ratios are what the issue bounds (<= 1.3x): they cancel the machine's noise and the cost of
gRPC itself, leaving what the engine adds to a call. The handler ratio is reported, not
bounded: an empty handler costs next to nothing, so it only shows the engine's own time.

Apply is called as the gateway calls it: `with_legal` (the next seats' legal actions in the
Step), on the state the engine returned for that table last, with a move from the legal
list that came with it, over `TABLES` tables in turn (the gateway bench's table count).
That is the bounded figure. The engine keeps the states it issued lately
(services/engines/core/issued.py), so a second Apply kind is measured too and reported
beside it: the moves of tables another engine process played the same way under the same
key (another replica, or this one before a restart), whose states the engine must read
back from their bytes.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import grpc
import psutil
from cultists.v1 import common_pb2, engine_pb2, engine_pb2_grpc

from bench.load import load_average
from services.engines.registry import available_games
from services.runtime.ports import free_port, wait_for_port

TARGET_RATIO = 1.3
TABLES = 200  # as bench/gateway.py plays
PROCESSES = 2  # engine processes per kind of Apply, pooled (see _ping_and_apply)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _figures(ping: list[float], apply: list[float]) -> dict[str, float]:
    """p50 and p99 of both, in ms, and Apply's ratios to the empty call."""
    out: dict[str, float] = {}
    for q, tag in ((0.5, "p50"), (0.99, "p99")):
        p, a = _pct(ping, q) * 1000, _pct(apply, q) * 1000
        out[f"ping_{tag}_ms"], out[f"apply_{tag}_ms"] = round(p, 4), round(a, 4)
        out[f"apply_over_ping_{tag}"] = round(a / p, 3)
    return out


class _Tables:
    """Games played as the gateway plays them: each Apply on the state the engine returned
    for that table last, with a move from the legal list that came with it."""

    def __init__(
        self, stub: engine_pb2_grpc.GameEngineStub, count: int, seed: int, spread: int = 200
    ) -> None:
        self.stub = stub
        self.rng = random.Random(seed)
        self.seeds = iter(range(seed * 10**6, (seed + 1) * 10**6))
        self.steps = [self._new() for _ in range(count)]
        self.turn = 0
        # Tables spread over their first `spread` moves, not all at the start of a game
        # (played before anything is timed).
        for i in range(count):
            for _ in range(self.rng.randrange(spread)):
                if self.steps[i].terminal:
                    self.steps[i] = self._new()
                self.steps[i] = self.stub.Apply(self._move(self.steps[i]))

    def _new(self) -> common_pb2.Step:
        return self.stub.NewGame(engine_pb2.NewGameRequest(seed=next(self.seeds), with_legal=True))

    def refill(self) -> None:
        """Finished tables start again (between chunks, outside the measured window)."""
        self.steps = [self._new() if step.terminal else step for step in self.steps]

    def requests(self, n: int) -> Iterator[tuple[int, engine_pb2.ApplyRequest]]:
        """The next `n` moves, round the tables, skipping any that finished this chunk."""
        made = 0
        while made < n:
            i = self.turn
            self.turn = (self.turn + 1) % len(self.steps)
            step = self.steps[i]
            if step.terminal:
                continue
            yield i, self._move(step)
            made += 1

    def _move(self, step: common_pb2.Step) -> engine_pb2.ApplyRequest:
        seat = step.to_act[0]
        actions = next(s.actions for s in step.legal if s.seat == seat)
        action = self.rng.choice(actions).id
        return engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True)


def _engine(game: str, port: int, key: str, record: str | None) -> subprocess.Popen:
    """An engine process as `cultists serve` runs it (timed when `record` names a file)."""
    argv = [sys.executable, "-m", "bench.timed_engine", game, str(port), record or os.devnull]
    return subprocess.Popen(
        argv,
        env={**os.environ, "CULTISTS_STATE_KEY": key},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(engine: subprocess.Popen) -> None:
    engine.terminate()
    engine.wait(timeout=30)


def _replica_moves(game: str, key: str, n: int) -> list[engine_pb2.ApplyRequest]:
    """Moves of tables another engine process played under the same state key, the same
    way as the measured tables but other games (so the measured engine never issued them)."""
    port = free_port()
    engine = _engine(game, port, key, None)
    moves: list[engine_pb2.ApplyRequest] = []
    try:
        wait_for_port(port, timeout=30)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            tables = _Tables(engine_pb2_grpc.GameEngineStub(channel), TABLES, seed=2)
            while len(moves) < n:
                tables.refill()
                for table, request in tables.requests(min(250, n - len(moves))):
                    moves.append(request)
                    tables.steps[table] = tables.stub.Apply(request)
    finally:
        _stop(engine)
    return moves


def _cpu_seconds(pid: int) -> float:
    """CPU time of every thread of a process, to the nanosecond where Linux's schedstat
    has it: `cpu_times` counts 10 ms ticks, a few per cent of a 250-call chunk."""
    task_dir = f"/proc/{pid}/task"
    try:
        tasks = os.listdir(task_dir)
    except OSError:
        tasks = []
    if not tasks or not os.path.exists(f"{task_dir}/{tasks[0]}/schedstat"):
        return sum(psutil.Process(pid).cpu_times()[:2])  # not Linux, or no schedstat
    total = 0
    for task in tasks:  # the engine's threads live as long as it does
        try:
            with open(f"{task_dir}/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            continue
    return total / 1e9


def _ping_and_apply(
    game: str, key: str, samples: int, chunk: int, moves: list[engine_pb2.ApplyRequest] | None
) -> dict[str, Any]:
    """`PROCESSES` engine processes in turn, each alternating chunks of Ping and of Apply:
    the tables' moves, or `moves` when given (another replica's), `samples` calls of each
    kind per process. Each kind of Apply gets engines of their own, so each engine sees one
    traffic pattern, as a replica in production does. The CPU ratio pools the processes:
    one process's ratio moves with where its threads happen to run (the same build gave
    1.19x-1.36x in four processes on one machine), and each process's own is kept beside."""
    times: dict[str, list[float]] = {"ping": [], "apply": []}
    handler: dict[str, list[float]] = {"ping": [], "apply": []}
    cpu = {"ping": 0.0, "apply": 0.0}
    by_process = []
    for process in range(PROCESSES):
        one = _one_engine(game, key, samples, chunk, moves, seed=1 + 2 * process)
        for kind in times:
            times[kind] += one["times"][kind]
            handler[kind] += one["handler"][kind]
            cpu[kind] += one["cpu"][kind]
        by_process.append(round(one["cpu"]["apply"] / one["cpu"]["ping"], 3))
    calls = samples * PROCESSES
    cpu_ms = {kind: cpu[kind] / calls * 1000 for kind in cpu}
    return {
        "client": _figures(times["ping"], times["apply"]),
        "server_handler": _figures(handler["ping"], handler["apply"]),
        "cpu_per_call_ms": {kind: round(ms, 4) for kind, ms in cpu_ms.items()},
        "cpu_apply_over_ping": round(cpu_ms["apply"] / cpu_ms["ping"], 3),
        "cpu_apply_over_ping_by_process": by_process,
    }


def _one_engine(
    game: str,
    key: str,
    samples: int,
    chunk: int,
    moves: list[engine_pb2.ApplyRequest] | None,
    seed: int,
) -> dict[str, Any]:
    """One engine process's round trips, handler times and CPU seconds, per kind."""
    # The engine runs in its own process, as in production, so the client's Python work
    # does not share a GIL with the server's; it records each RPC's server-side time.
    port = free_port()
    times: dict[str, list[float]] = {"ping": [], "apply": []}
    cpu = {"ping": 0.0, "apply": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "rpc.json")
        engine = _engine(game, port, key, record)
        try:
            wait_for_port(port, timeout=30)
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = engine_pb2_grpc.GameEngineStub(channel)
                tables = _Tables(stub, TABLES, seed=seed) if moves is None else None
                ping = engine_pb2.PingRequest()
                # Alternate chunks of each kind, so both see the same machine noise, and
                # read the engine process's CPU time around each chunk.
                for i in range(0, samples, chunk):
                    n = min(chunk, samples - i)
                    if tables is not None:
                        tables.refill()
                    before = _cpu_seconds(engine.pid)
                    for _ in range(n):
                        t0 = time.perf_counter()
                        stub.Ping(ping)
                        times["ping"].append(time.perf_counter() - t0)
                    middle = _cpu_seconds(engine.pid)
                    if tables is not None:
                        for table, request in tables.requests(n):
                            t0 = time.perf_counter()
                            tables.steps[table] = stub.Apply(request)
                            times["apply"].append(time.perf_counter() - t0)
                    else:
                        for request in (moves or [])[i : i + n]:
                            t0 = time.perf_counter()
                            stub.Apply(request)
                            times["apply"].append(time.perf_counter() - t0)
                    cpu["ping"] += middle - before
                    cpu["apply"] += _cpu_seconds(engine.pid) - middle
        finally:
            _stop(engine)
        with open(record) as f:
            server = json.load(f)
    # The handler's last Apply times: the tables' spreading moves came first, untimed.
    handler = {"ping": server["Ping"], "apply": server["Apply"][-samples:]}
    return {"times": times, "handler": handler, "cpu": cpu}


def run(samples: int = 3000, chunk: int = 250) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}, "load_average": load_average(), "tables": TABLES}
    key = os.urandom(16).hex()  # replicas share CULTISTS_STATE_KEY
    for game in available_games():
        read_back = _replica_moves(game, key, samples)
        out[game] = {
            "samples": samples,
            **_ping_and_apply(game, key, samples, chunk, None),
            "state_bytes_median": int(statistics.median(len(r.state) for r in read_back)),
            # The same figures for states another replica issued, read back from their bytes.
            "read_back": _ping_and_apply(game, key, samples, chunk, read_back),
        }
        client = out[game]["client"]
        out["targets"][f"{game} Apply p50 <= {TARGET_RATIO}x empty call"] = (
            client["apply_over_ping_p50"] <= TARGET_RATIO
        )
        out["targets"][f"{game} Apply p99 <= {TARGET_RATIO}x empty call"] = (
            client["apply_over_ping_p99"] <= TARGET_RATIO
        )
        out["targets"][f"{game} Apply CPU/call <= {TARGET_RATIO}x empty call"] = (
            out[game]["cpu_apply_over_ping"] <= TARGET_RATIO
        )
        for label, figures in (("Apply", out[game]), ("Apply, state read back", out[game]["read_back"])):
            c, h, cpu_call = figures["client"], figures["server_handler"], figures["cpu_per_call_ms"]
            print(
                f"  {game} {label}: round trip p50 {c['ping_p50_ms']:.3f} vs {c['apply_p50_ms']:.3f} ms "
                f"({c['apply_over_ping_p50']:.2f}x), p99 {c['ping_p99_ms']:.3f} vs {c['apply_p99_ms']:.3f} ms "
                f"({c['apply_over_ping_p99']:.2f}x); handler p50 {h['ping_p50_ms']:.4f} vs "
                f"{h['apply_p50_ms']:.4f} ms, p99 {h['ping_p99_ms']:.4f} vs {h['apply_p99_ms']:.4f} ms; engine "
                f"CPU/call {cpu_call['ping']:.3f} vs {cpu_call['apply']:.3f} ms ({figures['cpu_apply_over_ping']:.2f}x)",
                flush=True,
            )
    out["load_average_after"] = load_average()
    return out
