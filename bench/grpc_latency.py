"""gRPC Apply against an empty unary call (Ping) on the same server, in one run (issue 18
item 3): round-trip p50/p99 as a client sees them, the server-side handler time of each
(bench/timed_engine.py records every call), and the engine process's CPU per call, read
around alternating chunks of each kind.

Ratios are what the issue bounds (<= 1.3x): they cancel the machine's noise and the cost of
gRPC itself, leaving what the engine adds to a call. The handler ratio is reported, not
bounded: an empty handler costs next to nothing, so it only shows the engine's own time.
Apply is called as the gateway calls it, `with_legal` (the next seats' legal actions in the
Step), so the figure is a move's real engine call.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import grpc
import psutil
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.registry import available_games
from services.runtime.ports import free_port, wait_for_port

TARGET_RATIO = 1.3


def _positions(stub: engine_pb2_grpc.GameEngineStub, n: int) -> list[tuple[bytes, int, int]]:
    """Mid-game (state, seat, action) triples to replay as Apply calls."""
    out: list[tuple[bytes, int, int]] = []
    seed = 0
    while len(out) < n:
        step = stub.NewGame(engine_pb2.NewGameRequest(seed=seed))
        seed += 1
        while not step.terminal and len(out) < n:
            seat = step.to_act[0]
            view = stub.View(engine_pb2.ViewRequest(state=step.state, seat=seat))
            action = view.legal_actions[len(out) % len(view.legal_actions)].id
            out.append((step.state, seat, action))
            step = stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action))
    return out


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


def run(samples: int = 3000, chunk: int = 250) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}, "load_average": list(os.getloadavg())}
    for game in available_games():
        # The engine runs in its own process, as in production, so the client's Python work
        # does not share a GIL with the server's; it records each RPC's server-side time.
        port = free_port()
        with tempfile.TemporaryDirectory() as tmp:
            record = os.path.join(tmp, "rpc.json")
            engine = subprocess.Popen(
                [sys.executable, "-m", "bench.timed_engine", game, str(port), record],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            proc = psutil.Process(engine.pid)
            ping_times, apply_times = [], []
            cpu = {"ping": 0.0, "apply": 0.0}
            try:
                wait_for_port(port, timeout=30)
                with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                    stub = engine_pb2_grpc.GameEngineStub(channel)
                    positions = _positions(stub, samples)
                    request = engine_pb2.PingRequest()
                    # As the gateway calls it: asking for the next seats' legal actions too.
                    applies = [
                        engine_pb2.ApplyRequest(state=state, seat=seat, action=action, with_legal=True)
                        for state, seat, action in positions
                    ]
                    # Alternate chunks of each, so both see the same machine noise, and read
                    # the engine process's CPU time around each chunk.
                    for i in range(0, samples, chunk):
                        for kind, calls in (
                            ("ping", [(stub.Ping, request)] * len(applies[i : i + chunk])),
                            ("apply", [(stub.Apply, r) for r in applies[i : i + chunk]]),
                        ):
                            times = ping_times if kind == "ping" else apply_times
                            before = sum(proc.cpu_times()[:2])
                            for call, message in calls:
                                t0 = time.perf_counter()
                                call(message)
                                times.append(time.perf_counter() - t0)
                            cpu[kind] += sum(proc.cpu_times()[:2]) - before
            finally:
                engine.terminate()
                engine.wait(timeout=30)
            with open(record) as f:
                server = json.load(f)
        server_ping, server_apply = server["Ping"], server["Apply"][-samples:]
        client = _figures(ping_times, apply_times)
        inside = _figures(server_ping, server_apply)
        cpu_ping_ms, cpu_apply_ms = cpu["ping"] / samples * 1000, cpu["apply"] / samples * 1000
        out[game] = {
            "samples": samples,
            "client": client,
            "server_handler": inside,
            "cpu_per_call_ms": {"ping": round(cpu_ping_ms, 4), "apply": round(cpu_apply_ms, 4)},
            "cpu_apply_over_ping": round(cpu_apply_ms / cpu_ping_ms, 3),
            "state_bytes_median": int(statistics.median(len(p[0]) for p in positions)),
        }
        out["targets"][f"{game} Apply p50 <= {TARGET_RATIO}x empty call"] = (
            client["apply_over_ping_p50"] <= TARGET_RATIO
        )
        out["targets"][f"{game} Apply p99 <= {TARGET_RATIO}x empty call"] = (
            client["apply_over_ping_p99"] <= TARGET_RATIO
        )
        out["targets"][f"{game} Apply CPU/call <= {TARGET_RATIO}x empty call"] = (
            cpu_apply_ms / cpu_ping_ms <= TARGET_RATIO
        )
        print(
            f"  {game}: round trip p50 {client['ping_p50_ms']:.3f} vs {client['apply_p50_ms']:.3f} ms "
            f"({client['apply_over_ping_p50']:.2f}x), p99 {client['ping_p99_ms']:.3f} vs "
            f"{client['apply_p99_ms']:.3f} ms ({client['apply_over_ping_p99']:.2f}x); handler p50 "
            f"{inside['ping_p50_ms']:.4f} vs {inside['apply_p50_ms']:.4f} ms, p99 {inside['ping_p99_ms']:.4f} "
            f"vs {inside['apply_p99_ms']:.4f} ms; engine CPU/call {cpu_ping_ms:.3f} vs {cpu_apply_ms:.3f} ms "
            f"({cpu_apply_ms / cpu_ping_ms:.2f}x)",
            flush=True,
        )
    out["load_average_after"] = list(os.getloadavg())
    return out
