"""An engine keeps its own bounds, whoever calls it (issue 27 item 7).

Real servers only: an in-process engine on a free loopback port for the budget ceilings,
and `cultists serve` as a subprocess where the question is what the process does after
its caller gave up (CPU read from the process itself with psutil) or after SIGTERM.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import grpc
import psutil
import pytest
from cultists.v1 import engine_pb2, engine_pb2_grpc

from services.engines.core.budget import ITERATIONS_ENV, MS_ENV, BotBudget
from services.engines.core.server import GRACE_ENV, start_engine
from services.runtime.ports import free_port, wait_for_port

GAME = "trash_cult"
# A search far longer than any test waits: only the engine's own stop ends it.
ENDLESS = "ismcts:iterations=100000000"


def _choice_position(stub: engine_pb2_grpc.GameEngineStub) -> tuple[bytes, int]:
    """A state whose seat to act has more than one legal action (a search really runs)."""
    for seed in range(50):
        step = stub.NewGame(engine_pb2.NewGameRequest(seed=seed, with_legal=True), timeout=10)
        for entry in step.legal:
            if len(entry.actions) > 1:
                return step.state, entry.seat
    raise AssertionError("no opening position with a choice in 50 seeds")


@pytest.fixture(scope="module")
def bounded():
    """An engine whose ceilings are low: 300 iterations, 100 ms."""
    engine = start_engine(GAME, port=0, budget=BotBudget(iterations=300, ms=100.0))
    channel = grpc.insecure_channel(f"127.0.0.1:{engine.port}")
    try:
        yield engine_pb2_grpc.GameEngineStub(channel)
    finally:
        channel.close()
        engine.stop(grace=1)


@pytest.mark.parametrize(
    ("bot", "named"),
    [
        ("ismcts:iterations=301", f"{ITERATIONS_ENV}=300"),
        ("ismcts:ms=100.5", f"{MS_ENV}=100"),
        ("ismcts:ms=5000,iterations=10", f"{MS_ENV}=100"),
    ],
)
def test_a_budget_above_the_engines_ceiling_is_refused_naming_it(bounded, bot, named):
    state, seat = _choice_position(bounded)
    with pytest.raises(grpc.RpcError) as caught:
        bounded.SuggestAction(engine_pb2.BotRequest(state=state, seat=seat, bot=bot, seed=1), timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert named in caught.value.details()


def test_budgets_within_the_ceiling_are_served(bounded):
    state, seat = _choice_position(bounded)
    for bot in ("ismcts:iterations=300", "ismcts:ms=100", "ismcts", "heuristic", "random"):
        action = bounded.SuggestAction(
            engine_pb2.BotRequest(state=state, seat=seat, bot=bot, seed=1), timeout=30
        )
        assert action.label


def test_the_default_budget_is_priced_too():
    """`ismcts` with no parameters searches 200 iterations: refused where the ceiling is 100."""
    engine = start_engine(GAME, port=0, budget=BotBudget(iterations=100, ms=100.0))
    try:
        with grpc.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
            stub = engine_pb2_grpc.GameEngineStub(channel)
            state, seat = _choice_position(stub)
            with pytest.raises(grpc.RpcError) as caught:
                stub.SuggestAction(engine_pb2.BotRequest(state=state, seat=seat, bot="ismcts"), timeout=10)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "iterations=200" in caught.value.details()
    finally:
        engine.stop(grace=1)


@pytest.fixture()
def served():
    """`cultists serve` as its own process, ceilings raised so only a stop ends ENDLESS."""
    port = free_port()
    env = {**os.environ, ITERATIONS_ENV: "1000000000", MS_ENV: "100000000", GRACE_ENV: "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "serve", GAME, "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        wait_for_port(port, timeout=60)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield proc, engine_pb2_grpc.GameEngineStub(channel)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def _cpu_after(pid: int, seconds: float) -> float:
    """CPU the process spends over the next `seconds` (an idle engine spends ~0)."""
    proc = psutil.Process(pid)
    before = _cpu_seconds(proc)
    time.sleep(seconds)
    return _cpu_seconds(proc) - before


def test_a_search_stops_when_its_callers_deadline_passes(served):
    proc, stub = served
    state, seat = _choice_position(stub)
    with pytest.raises(grpc.RpcError) as caught:
        stub.SuggestAction(engine_pb2.BotRequest(state=state, seat=seat, bot=ENDLESS), timeout=1.0)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # Without the engine's own stop the search runs on at a full core for minutes; the
    # target, under 0.2 s of CPU after the deadline, is measured in `make bench`
    # (bench/engine_bounds.py); the bound here is generous for a loaded box.
    spent = _cpu_after(proc.pid, 3.0)
    assert spent < 0.5, f"the engine spent {spent:.2f} CPU-s after its caller's deadline"
    # And it still serves.
    assert stub.SuggestAction(engine_pb2.BotRequest(state=state, seat=seat, bot="random"), timeout=10).label


def test_a_search_stops_when_its_caller_hangs_up(served):
    proc, stub = served
    state, seat = _choice_position(stub)
    call = stub.SuggestAction.future(engine_pb2.BotRequest(state=state, seat=seat, bot=ENDLESS), timeout=600)
    busy = psutil.Process(proc.pid)
    start = _cpu_seconds(busy)
    deadline = time.monotonic() + 30
    while _cpu_seconds(busy) - start < 0.5:  # the search is under way
        assert time.monotonic() < deadline, "the search never started"
        time.sleep(0.1)
    assert call.cancel()
    spent = _cpu_after(proc.pid, 3.0)
    assert spent < 0.5, f"the engine spent {spent:.2f} CPU-s after its caller hung up"


def test_sigterm_ends_a_running_search_within_the_grace_period(served):
    """ENGINE_GRACE_SECONDS=1: a search that would run for minutes is stopped once the
    drain's grace is over, and the process exits instead of living on with its thread."""
    proc, stub = served
    state, seat = _choice_position(stub)
    call = stub.SuggestAction.future(engine_pb2.BotRequest(state=state, seat=seat, bot=ENDLESS), timeout=600)
    busy = psutil.Process(proc.pid)
    start = _cpu_seconds(busy)
    deadline = time.monotonic() + 30
    while _cpu_seconds(busy) - start < 0.5:
        assert time.monotonic() < deadline, "the search never started"
        time.sleep(0.1)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    took = time.monotonic() - sent
    # Grace 1 s, then the search looks at its stop hook within a millisecond; the rest is
    # interpreter shutdown on a loaded machine.
    assert took < 6, f"the engine lived {took:.1f} s after SIGTERM with a 1 s grace"
    with pytest.raises(grpc.RpcError):
        call.result(timeout=10)
    out = proc.stdout.read().decode()
    assert "draining (grace 1s)" in out and "stopped" in out
