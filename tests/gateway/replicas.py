"""Real engine replicas for the balancing tests: `cultists serve` processes sharing one
state key (as every replica of a deployment does, so a state one issued is trusted by the
other), each counted from its own /metrics, and the play the tests run against them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import urllib.request
from typing import Any

from services.runtime.ports import can_bind, free_port, wait_for_port

from .conftest import bearer

GAME = "trash_cult"  # two seats (Crazy Cultists needs three, CC-2)


class Replica:
    """One `cultists serve` process bound to `host` (an IPv4 or IPv6 address) and `port`
    (a free one unless given), with its metrics on a port of their own on the same host."""

    def __init__(self, state_key: str, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.host = host
        self.port = port or free_port()
        self.metrics = free_port()
        env = os.environ | {"CULTISTS_STATE_KEY": state_key}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "serve", GAME, "--host", host, "--port", str(self.port),
             "--metrics-port", str(self.metrics)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        wait_for_port(self.port, host=host, timeout=60)
        wait_for_port(self.metrics, host=host, timeout=60)

    def calls(self) -> float:
        """Engine RPCs this replica served (every method), from its own /metrics."""
        where = f"[{self.host}]" if ":" in self.host else self.host
        text = urllib.request.urlopen(f"http://{where}:{self.metrics}/metrics", timeout=10).read().decode()
        pattern = r'^cultists_engine_rpc_duration_seconds_count\{game="' + GAME + r'",method="\w+"\} (\S+)$'
        return sum(float(v) for v in re.findall(pattern, text, re.M))

    def kill(self) -> None:
        """SIGKILL: the calls it is serving are cut off, as when a node dies."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def port_free_on(*hosts: str) -> int:
    """A port no server holds on any of `hosts` (replicas on one port, several addresses)."""
    for _ in range(100):
        port = free_port()
        if all(can_bind(port, host) for host in hosts):
            return port
    raise RuntimeError(f"no port free on all of {hosts}")


def new_table(client) -> tuple[str, list[str]]:
    """A 2-seat table of GAME, both seats taken through the Flask test client."""
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    return tid, tokens


def move(client, tid: str, tokens: list[str]) -> tuple[Any, bool]:
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
    chosen = {"action": legal.get_json()["legal_actions"][0]["id"], "version": body["version"]}
    return client.post(f"/api/tables/{tid}/actions", json=chosen, headers=bearer(tokens[seat])), False


def share_of_first(client, replicas: list[Replica], moves: int = 60) -> tuple[float, list[float]]:
    """Plays `moves` moves over as many tables as that takes (every one answered 200);
    the first replica's share of the engine calls they made, and each replica's count."""
    before = [r.calls() for r in replicas]
    made = 0
    while made < moves:
        tid, tokens = new_table(client)
        for _ in range(20):
            reply, over = move(client, tid, tokens)
            if over:
                break
            assert reply.status_code == 200, reply.get_data(as_text=True)
            made += 1
    served = [r.calls() - b for r, b in zip(replicas, before, strict=True)]
    return served[0] / sum(served), served


def play_while_killing(client, redis, victim: Replica, tables: int = 4, moves: int = 40) -> dict[str, int]:
    """`tables` tables play move after move, each from its own thread, and `victim` is
    killed once every one has made 5 (SIGKILL, calls in flight cut off). Asserts every
    move was answered 200 and each table went on after the kill; returns the moves each
    made, for the caller to hold against the table's version."""
    from .support import stored

    opened = [new_table(client) for _ in range(tables)]
    start = {tid: stored(redis, tid)[0] for tid, _ in opened}
    made = {tid: 0 for tid, _ in opened}
    failures: list[str] = []
    halfway = threading.Barrier(tables + 1)

    def play(tid: str, tokens: list[str]) -> None:
        waited = False
        try:
            while made[tid] < moves:
                reply, over = move(client, tid, tokens)
                if over:
                    break
                if reply.status_code != 200:
                    failures.append(f"{tid}: {reply.status_code} {reply.get_data(as_text=True)}")
                    break
                made[tid] += 1
                if made[tid] == 5 and not waited:  # every table is playing when the kill lands
                    waited = True
                    halfway.wait(timeout=60)
        except Exception as exc:  # a thread's error is the test's failure, not a warning
            failures.append(f"{tid} after {made[tid]} moves: {exc!r}")
        finally:
            if not waited:
                halfway.wait(timeout=60)

    threads = [threading.Thread(target=play, args=t) for t in opened]
    for t in threads:
        t.start()
    halfway.wait(timeout=60)
    victim.kill()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert not failures, failures
    assert all(m > 5 for m in made.values()), made  # each table went on after the kill
    for tid, _ in opened:
        assert stored(redis, tid)[0] == start[tid] + made[tid], (tid, made[tid])
    return made
