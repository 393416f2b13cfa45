"""Several replicas of one engine behind one address: the gateway spreads its calls over
all of them (round_robin), and a replica killed mid-play costs no move a 503 and applies
none twice (a call that ends UNAVAILABLE is retried once on another replica;
services/platform/engine_channels.py).

The replicas are real `cultists serve` processes on loopback ports, sharing the state key
as every replica of a deployment does, so a state one issued is trusted by the other."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from services.gateway import create_app
from services.platform.engine_channels import engine_target
from services.runtime.ports import free_port, wait_for_port

from .conftest import bearer
from .support import stored

GAME = "trash_cult"  # two seats (Crazy Cultists needs three, CC-2)


class Replica:
    """One `cultists serve` process and the port its metrics are on."""

    def __init__(self, state_key: str) -> None:
        self.port, self.metrics = free_port(), free_port()
        env = os.environ | {"CULTISTS_STATE_KEY": state_key}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "serve", GAME, "--port", str(self.port),
             "--metrics-port", str(self.metrics)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, timeout=60)
        wait_for_port(self.metrics, timeout=60)

    def calls(self) -> float:
        """Engine RPCs this replica served (every method), from its own /metrics."""
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.metrics}/metrics", timeout=10).read().decode()
        pattern = r'^cultists_engine_rpc_duration_seconds_count\{game="' + GAME + r'",method="\w+"\} (\S+)$'
        return sum(float(v) for v in re.findall(pattern, text, re.M))

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture()
def replicas() -> Iterator[list[Replica]]:
    key = os.urandom(16).hex()
    started = [Replica(key), Replica(key)]
    try:
        yield started
    finally:
        for replica in started:
            replica.kill()


@pytest.fixture()
def replicated(gateway_settings, replicas):
    """The gateway app with GAME's engine named as both replicas, comma-separated."""
    both = ",".join(f"127.0.0.1:{r.port}" for r in replicas)
    settings = replace(gateway_settings, engine_addresses=gateway_settings.engine_addresses | {GAME: both})
    app = create_app(settings)
    yield app
    app.extensions["cultists"].close()


def _new_table(client) -> tuple[str, list[str]]:
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    return tid, tokens


def _move(client, tid: str, tokens: list[str]) -> tuple[Any, bool]:
    """One move at the table: the seat to act plays its first legal action. Returns the
    reply and whether the game is over (nothing more to play)."""
    public = client.get(f"/api/tables/{tid}/view")
    if public.status_code != 200:
        return public, False
    body = public.get_json()
    if body["terminal"]:
        return public, True
    seat = body["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat]))
    if legal.status_code != 200:
        return legal, False
    move = {"action": legal.get_json()["legal_actions"][0]["id"], "version": body["version"]}
    return client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat])), False


def test_several_addresses_become_one_balanced_target():
    assert engine_target("engine:50051") == "dns:///engine:50051"
    assert engine_target("127.0.0.1:1, 127.0.0.1:2") == "ipv4:127.0.0.1:1,127.0.0.1:2"
    assert engine_target("localhost:7,127.0.0.2:8").startswith("ipv4:127.0.0.1:7,")
    assert engine_target("dns:///engine:50051") == "dns:///engine:50051"
    for bad in ("", "engine", "engine:port", ":50051"):
        with pytest.raises(ValueError):
            engine_target(bad)


def test_calls_split_between_two_replicas(replicated, replicas):
    client = replicated.test_client()
    before = [r.calls() for r in replicas]
    made = 0
    while made < 60:
        tid, tokens = _new_table(client)
        for _ in range(20):
            reply, over = _move(client, tid, tokens)
            if over:
                break
            assert reply.status_code == 200, reply.get_data(as_text=True)
            made += 1
    served = [r.calls() - b for r, b in zip(replicas, before, strict=True)]
    share = served[0] / sum(served)
    assert 0.4 <= share <= 0.6, f"calls per replica {served}"


def test_a_replica_killed_mid_play_costs_no_move(replicated, replicas):
    """Four tables play move after move, each from its own thread, while one replica is
    killed (SIGKILL, calls in flight cut off): every move is answered 200, and each table's
    version went up by exactly its moves (none applied twice, none lost)."""
    client = replicated.test_client()
    gw = replicated.extensions["cultists"]
    tables = [_new_table(client) for _ in range(4)]
    start = {tid: stored(gw.redis, tid)[0] for tid, _ in tables}
    made = {tid: 0 for tid, _ in tables}
    failures: list[str] = []
    halfway = threading.Barrier(len(tables) + 1)
    stop = threading.Event()

    def play(tid: str, tokens: list[str]) -> None:
        waited = False
        while not stop.is_set() and made[tid] < 40:
            reply, over = _move(client, tid, tokens)
            if over:
                break
            if reply.status_code != 200:
                failures.append(f"{tid}: {reply.status_code} {reply.get_data(as_text=True)}")
                break
            made[tid] += 1
            if made[tid] == 5 and not waited:  # every table is playing when the kill lands
                waited = True
                halfway.wait(timeout=60)
        if not waited:
            halfway.wait(timeout=60)

    threads = [threading.Thread(target=play, args=t) for t in tables]
    for t in threads:
        t.start()
    halfway.wait(timeout=60)
    replicas[0].kill()
    for t in threads:
        t.join(timeout=120)
    stop.set()
    assert not any(t.is_alive() for t in threads)
    assert not failures, failures
    assert all(m > 5 for m in made.values()), made  # each table went on after the kill
    for tid, _ in tables:
        assert stored(gw.redis, tid)[0] == start[tid] + made[tid], (tid, made[tid])
    assert replicas[1].calls() > 0
