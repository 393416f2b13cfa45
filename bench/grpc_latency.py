"""gRPC Apply latency against an empty unary call on the same server, in one run.

The ratio of medians is what the issue bounds (<= 1.3x): it cancels the machine's noise
and the cost of gRPC itself, leaving what the engine adds to a call.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Any

import grpc
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


def run(samples: int = 3000) -> dict[str, Any]:
    out: dict[str, Any] = {"targets": {}}
    for game in available_games():
        # The engine runs in its own process, as in production, so the client's Python work
        # does not share a GIL with the server's.
        port = free_port()
        engine = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "serve", game, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_port(port, timeout=30)
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = engine_pb2_grpc.GameEngineStub(channel)
                positions = _positions(stub, samples)
                ping_times, apply_times = [], []
                request = engine_pb2.PingRequest()
                # Interleave the two so both see the same machine noise.
                for state, seat, action in positions:
                    t0 = time.perf_counter()
                    stub.Ping(request)
                    t1 = time.perf_counter()
                    stub.Apply(engine_pb2.ApplyRequest(state=state, seat=seat, action=action))
                    t2 = time.perf_counter()
                    ping_times.append(t1 - t0)
                    apply_times.append(t2 - t1)
        finally:
            engine.terminate()
            engine.wait(timeout=30)
        ping_ms = statistics.median(ping_times) * 1000
        apply_ms = statistics.median(apply_times) * 1000
        ratio = apply_ms / ping_ms
        out[game] = {
            "samples": samples,
            "ping_median_ms": round(ping_ms, 4),
            "apply_median_ms": round(apply_ms, 4),
            "apply_p99_ms": round(sorted(apply_times)[int(0.99 * len(apply_times))] * 1000, 4),
            "apply_over_ping": round(ratio, 3),
            "state_bytes_median": int(statistics.median(len(p[0]) for p in positions)),
        }
        out["targets"][f"{game} Apply median <= {TARGET_RATIO}x empty call"] = ratio <= TARGET_RATIO
        print(f"  {game}: ping {ping_ms:.3f} ms, apply {apply_ms:.3f} ms, ratio {ratio:.2f}")
    return out
