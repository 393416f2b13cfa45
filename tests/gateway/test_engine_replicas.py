"""Several replicas of one engine behind one address: the gateway spreads its calls over
all of them (round_robin), and a replica killed mid-play costs no move a 503 and applies
none twice (a call that ends UNAVAILABLE is retried once on another replica;
services/platform/engine_channels.py).

The replicas are real `cultists serve` processes on loopback ports (replicas.py), listed
comma-separated; test_engine_dns.py names them with one DNS name instead, and
test_engine_replicas_gunicorn.py plays through a kill under gunicorn."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace

import pytest

from services.gateway import create_app
from services.platform.engine_channels import engine_target

from .replicas import GAME, Replica, play_while_killing, share_of_first


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


def test_several_addresses_become_one_balanced_target():
    assert engine_target("engine:50051") == "dns:///engine:50051"
    assert engine_target("127.0.0.1:1, 127.0.0.1:2") == "ipv4:127.0.0.1:1,127.0.0.1:2"
    assert engine_target("localhost:7,127.0.0.2:8").startswith("ipv4:127.0.0.1:7,")
    assert engine_target("dns:///engine:50051") == "dns:///engine:50051"
    for bad in ("", "engine", "engine:port", ":50051"):
        with pytest.raises(ValueError):
            engine_target(bad)


def test_calls_split_between_two_replicas(replicated, replicas):
    share, served = share_of_first(replicated.test_client(), replicas)
    assert 0.4 <= share <= 0.6, f"calls per replica {served}"


def test_a_replica_killed_mid_play_costs_no_move(replicated, replicas):
    """Four tables play move after move, each from its own thread, while one replica is
    killed (SIGKILL, calls in flight cut off): every move is answered 200, and each table's
    version went up by exactly its moves (none applied twice, none lost)."""
    play_while_killing(replicated.test_client(), replicated.extensions["cultists"].redis, replicas[0])
    assert replicas[1].calls() > 0
