"""A replica killed mid-play under the gateway as it runs: gunicorn with gevent workers
(deploy/gunicorn.conf.py), two real `cultists serve` replicas named by one DNS name with a
record for each (the form a k8s headless Service gives), several tables playing over HTTP
from threads of their own while one replica is SIGKILLed.

No move is answered 503 (a call the dead replica dropped ends UNAVAILABLE and gRPC retries
it once on the other; services/platform/engine_channels.py), none is applied twice (each
table's log versions run 1, 2, ... without a gap or a repeat, and its recorded moves are
exactly the ones answered 200, each once, in order), and play goes on on the survivor."""

from __future__ import annotations

import json
import os
import threading
import urllib.error
from collections.abc import Iterator

import pytest

from services.platform.keys import table_key
from services.platform.packing import unpack_actions
from services.runtime.redis_client import connect
from tests.support.dns_server import DnsServer

from .conftest import bearer
from .replicas import GAME, Replica, port_free_on
from .test_gunicorn import call, serve

TABLES = 6
MOVES = 20  # per table at most (a game may end first)
BEFORE_KILL = 4  # moves every table has made when the replica is killed
NAME = "engines.cultists.test"


@pytest.fixture()
def named_replicas() -> Iterator[tuple[str, list[Replica]]]:
    """Two replicas on one port (127.0.0.1:P and [::1]:P) and the one DNS name for both."""
    key = os.urandom(16).hex()
    hosts = ("127.0.0.1", "::1")
    port = port_free_on(*hosts)
    started: list[Replica] = []
    server = DnsServer({NAME: hosts})
    try:
        for host in hosts:
            started.append(Replica(key, host=host, port=port))
        yield server.target(NAME, port), started
    finally:
        for replica in started:
            replica.kill()
        server.stop()


def _open_table(base: str) -> tuple[str, list[str]]:
    tid = call(f"{base}/api/tables", "POST", {"game": GAME, "players": 2})["table"]
    return tid, [call(f"{base}/api/tables/{tid}/seats/{s}", "POST", {})["token"] for s in (0, 1)]


def _error(exc: urllib.error.HTTPError) -> str:
    return f"{exc.code} {exc.read().decode(errors='replace')[:300]}"


def test_a_replica_killed_under_gunicorn_costs_no_move(live_store, engines, tmp_path, named_replicas):
    address, replicas = named_replicas
    env = {
        f"ENGINE_ADDR_{GAME.upper()}": address,
        # Many moves from one address: the limits have their own tests (test_abuse.py).
        "GATEWAY_RATE_LIMIT_ADDRESS": "", "GATEWAY_RATE_LIMIT_PLAYER": "", "GATEWAY_RATE_LIMIT_GUEST": "",
        "GATEWAY_MAX_WAITING_TABLES": "0",
    }  # fmt: skip
    with serve(live_store, engines, tmp_path, extra_env=env) as (base, _proc):
        tables = [_open_table(base) for _ in range(TABLES)]
        # Per table, the (seat, action) of every move answered 200, in order.
        played: dict[str, list[tuple[int, int]]] = {tid: [] for tid, _ in tables}
        answered: dict[str, list[int]] = {tid: [] for tid, _ in tables}  # the version each move made
        failures: list[str] = []
        ready = threading.Barrier(TABLES + 1, timeout=120)

        def play(tid: str, tokens: list[str]) -> None:
            waited = False
            try:
                while len(played[tid]) < MOVES:
                    public = call(f"{base}/api/tables/{tid}/view")
                    if public["terminal"]:
                        break
                    seat = public["to_act"][0]
                    mine = call(f"{base}/api/tables/{tid}/view", headers=bearer(tokens[seat]))
                    action = mine["legal_actions"][0]["id"]
                    body = {"action": action, "version": mine["version"]}
                    made = call(f"{base}/api/tables/{tid}/actions", "POST", body, bearer(tokens[seat]))
                    played[tid].append((seat, action))
                    answered[tid].append(made["version"])
                    if len(played[tid]) == BEFORE_KILL and not waited:
                        waited = True
                        ready.wait()
            except urllib.error.HTTPError as exc:
                failures.append(f"{tid} after {len(played[tid])} moves: {_error(exc)}")
            except Exception as exc:  # no answer at all, or not the answer's shape
                failures.append(f"{tid} after {len(played[tid])} moves: {exc!r}")
            finally:
                if not waited:
                    ready.wait()

        threads = [threading.Thread(target=play, args=t, daemon=True) for t in tables]
        for thread in threads:
            thread.start()
        ready.wait()  # every table is mid-game
        survivor_before = replicas[1].calls()
        replicas[0].kill()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads), "a table's play never ended"
        assert not failures, failures
        after_kill = {tid: len(moves) - BEFORE_KILL for tid, moves in played.items()}
        assert all(n > 0 for n in after_kill.values()), f"moves each table made after the kill: {after_kill}"
        assert replicas[1].calls() > survivor_before, "the survivor served the play after the kill"

        redis = connect(live_store.url, live_store.cluster)
        for tid, moves in played.items():
            assert answered[tid] == list(range(1, len(moves) + 1)), (
                f"{tid}: versions answered {answered[tid]}"
            )
            log = call(f"{base}/api/tables/{tid}/events?limit=1000")["events"]
            versions = [e["version"] for e in log if "version" in e]
            assert versions == sorted(versions), f"{tid}: log versions out of order {versions}"
            # 0: the table opened and its seats taken; then one version per move answered.
            assert sorted(set(versions)) == list(range(len(moves) + 1)), (
                f"{tid}: {len(moves)} moves answered, log versions {sorted(set(versions))}"
            )
            recorded = [tuple(a) for a in unpack_actions(redis.hget(table_key(tid), "acts"))]
            assert recorded == moves, f"{tid}: recorded {json.dumps(recorded)}, answered {json.dumps(moves)}"
