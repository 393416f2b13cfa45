"""An engine's CPU after its caller gave up, and its life after SIGTERM (issue 27, item 7).

`cultists serve` as its own process (ceilings raised, so only a stop can end the search),
asked for a search that would run for minutes: `TRIALS` times with a 1 s gRPC deadline and
`TRIALS` times cancelled by the caller half a second in. After each, the CPU the process
spends over the next `WATCH_SECONDS` is read from the process itself (psutil); an idle
engine spends about nothing, one whose search ran on spends a full core. Target: under
0.2 CPU-s after every one. Then SIGTERM during such a search with a 1 s grace: the process
must exit, and the figure is how long it lived (target: within the grace plus 2 s of
interpreter shutdown). CPU time, not wall time, so a busy machine moves it little.
tests/contract/test_engine_bounds.py proves the behaviour with generous bounds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from typing import Any

import grpc
import psutil
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.core.budget import ITERATIONS_ENV, MS_ENV
from services.engines.core.server import GRACE_ENV
from services.runtime.ports import free_port, wait_for_port

GAME = "trash_cult"
ENDLESS = "ismcts:iterations=100000000"
TRIALS = 5
WATCH_SECONDS = 3.0
GRACE_SECONDS = 1
TARGET_CPU_AFTER = 0.2
TARGET_EXIT_SECONDS = GRACE_SECONDS + 2.0


def _serve() -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**os.environ, ITERATIONS_ENV: "1000000000", MS_ENV: "100000000", GRACE_ENV: str(GRACE_SECONDS)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "serve", GAME, "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    wait_for_port(port, timeout=60)
    return proc, port


def _position(stub: engine_pb2_grpc.GameEngineStub) -> tuple[bytes, int]:
    for seed in range(50):
        step = stub.NewGame(engine_pb2.NewGameRequest(seed=seed, with_legal=True), timeout=10)
        for entry in step.legal:
            if len(entry.actions) > 1:
                return step.state, entry.seat
    raise RuntimeError("no opening position with a choice in 50 seeds")


def _cpu(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def _cpu_over(proc: psutil.Process, seconds: float) -> float:
    before = _cpu(proc)
    time.sleep(seconds)
    return _cpu(proc) - before


def _searching(proc: psutil.Process, start: float) -> None:
    """Until the search has spent half a CPU-second (it is under way)."""
    deadline = time.monotonic() + 60
    while _cpu(proc) - start < 0.5:
        if time.monotonic() > deadline:
            raise RuntimeError("the search never started")
        time.sleep(0.05)


def run() -> dict[str, Any]:
    proc, port = _serve()
    busy = psutil.Process(proc.pid)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = engine_pb2_grpc.GameEngineStub(channel)
            state, seat = _position(stub)
            request = engine_pb2.BotRequest(state=state, seat=seat, bot=ENDLESS)
            after_deadline, after_hang_up = [], []
            for _ in range(TRIALS):
                with contextlib.suppress(grpc.RpcError):
                    stub.SuggestAction(request, timeout=1.0)
                after_deadline.append(_cpu_over(busy, WATCH_SECONDS))
            for _ in range(TRIALS):
                call = stub.SuggestAction.future(request, timeout=600)
                _searching(busy, _cpu(busy))
                call.cancel()
                after_hang_up.append(_cpu_over(busy, WATCH_SECONDS))
            running = stub.SuggestAction.future(request, timeout=600)  # held: a dropped call is cancelled
            _searching(busy, _cpu(busy))
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            lived = time.monotonic() - sent
            running.cancel()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    worst = max(after_deadline + after_hang_up)
    return {
        "trials": TRIALS,
        "watch_seconds": WATCH_SECONDS,
        "cpu_after_deadline_s": [round(x, 3) for x in after_deadline],
        "cpu_after_hang_up_s": [round(x, 3) for x in after_hang_up],
        "worst_cpu_after_s": round(worst, 3),
        "grace_seconds": GRACE_SECONDS,
        "lived_after_sigterm_s": round(lived, 2),
        "targets": {
            "cpu_after_stop": worst < TARGET_CPU_AFTER,
            "exit_within_grace": lived <= TARGET_EXIT_SECONDS,
        },
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
