"""`cultists serve` as a real process: it serves, then drains and exits cleanly on SIGTERM."""

from __future__ import annotations

import ctypes
import os
import platform
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


def _tgkill(pid: int, tid: int, sig: int) -> None:
    """A signal to one thread of another process (Linux's tgkill; Python has none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    sys_tgkill = 234  # x86-64
    if libc.syscall(sys_tgkill, pid, tid, sig) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _thread_blocks(pid: int, tid: int, sig: int) -> bool:
    with open(f"/proc/{pid}/task/{tid}/status") as status:
        line = next(x for x in status if x.startswith("SigBlk:"))
    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.machine() != "x86_64",
    reason="sends the signal to one thread with Linux x86-64's tgkill",
)
def test_a_stop_signal_taken_by_any_thread_drains_the_engine():
    """The kernel gives a process's signal to any thread that does not block it: numpy's
    BLAS starts such threads at import, before the engine could block anything. A SIGTERM
    that one of them took used to be lost (the main thread waited in `sigwait`), and the
    engine ran on until it was killed. Each thread that would take one is sent it here."""
    game = available_games()[0]
    tried = 0
    for attempt in range(8):  # one run per thread that takes the signal (a few at most)
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "serve", game, "--port", str(port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            wait_for_port(port, timeout=60)  # a busy 2-core machine's start
            takers = sorted(
                int(t)
                for t in os.listdir(f"/proc/{proc.pid}/task")
                if int(t) != proc.pid and not _thread_blocks(proc.pid, int(t), signal.SIGTERM)
            )
            if attempt >= len(takers):
                break
            _tgkill(proc.pid, takers[attempt], signal.SIGTERM)
            assert proc.wait(timeout=30) == 0, f"thread {attempt} of {len(takers)} took SIGTERM"
            tried += 1
            assert b"stopped" in proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert tried >= 1, "no thread but the main one takes a stop signal: nothing was tried"
