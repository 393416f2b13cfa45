"""`cultists serve` as a real process: it serves, then drains and exits cleanly on SIGTERM."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import urllib.request

import grpc
import pytest
from cultists.v1 import engine_pb2, engine_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.engines.registry import available_games
from services.runtime.ports import free_port, wait_for_port


@pytest.mark.parametrize("game", available_games())
def test_serve_then_sigterm_exits_cleanly(game):
    port, metrics = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "serve", game, "--port", str(port),
         "--metrics-port", str(metrics)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        wait_for_port(port, timeout=30)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert status.status == health_pb2.HealthCheckResponse.SERVING
            step = engine_pb2_grpc.GameEngineStub(channel).NewGame(
                engine_pb2.NewGameRequest(seed=1), timeout=5
            )
            assert step.to_act
        assert (
            b"cultists_engine_rpc_duration_seconds"
            in urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=5).read()
        )
        # SIGTERM while calls keep the server's threads busy: a signal that lands on one of
        # them (or between two of the main thread's checks) must still drain the engine.
        busy = threading.Event()
        halt = threading.Event()
        caller = threading.Thread(target=_keep_calling, args=(port, busy, halt), daemon=True)
        caller.start()
        assert busy.wait(timeout=10)
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=20) == 0
        finally:
            halt.set()
            caller.join(timeout=10)
        out = proc.stdout.read().decode()
        assert "draining" in out and "stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _keep_calling(port: int, busy: threading.Event, halt: threading.Event) -> None:
    """New games back to back until told to stop or the server goes away."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = engine_pb2_grpc.GameEngineStub(channel)
        seed = 0
        while not halt.is_set():
            try:
                stub.NewGame(engine_pb2.NewGameRequest(seed=seed), timeout=5)
            except grpc.RpcError:
                return
            seed += 1
            busy.set()
