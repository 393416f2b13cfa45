"""One DNS name with a record per replica, as a k8s headless Service gives: the gateway,
told only that name, finds both replicas through gRPC's own resolver and balances over
them (round_robin), and a replica killed mid-play costs no move a 503
(services/platform/engine_channels.py).

The two replicas are real `cultists serve` processes on one port number, one bound to
127.0.0.1 and one to [::1], so they are exactly the A and the AAAA record of one name. Two
names are tried:

- `localhost`, resolved by gRPC's own resolver as the gateway's channel resolves it
  (c-ares, which gives both loopbacks for `localhost`; the native resolver gives what
  getaddrinfo gives, both where /etc/hosts lists `::1 localhost`). Where it gives a single
  address the case is skipped, saying so: a name with one record cannot show a split.
- a name of this test's own DNS server (tests/support/dns_server.py), a real server on a
  loopback UDP port that gRPC's resolver asks over the wire (`dns://<server>/<name>:<port>`),
  as it asks the cluster's DNS for a Service: this one runs everywhere.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from services.gateway import create_app
from services.platform.engine_channels import open_channel
from tests.support.dns_server import DnsServer

from .replicas import GAME, Replica, play_while_killing, port_free_on, share_of_first

HOSTS = ("127.0.0.1", "::1")
NAME = "engines.cultists.test"


def _grpc_records(name: str, bound: float = 10.0) -> set[str]:
    """Which of HOSTS gRPC's own resolver gives `name` (c-ares by default, which answers
    `localhost` with both loopbacks even where getaddrinfo gives one; `native` asks
    getaddrinfo). A round_robin channel connects to every address its resolver gives, so
    each of HOSTS listens on one port and the channel's connections say which it got."""
    port = port_free_on(*HOSTS)
    listeners = {}
    for host in HOSTS:
        listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        listener.bind((host, port))
        listener.listen()
        listeners[listener] = host
    channel = open_channel(f"{name}:{port}")
    channel.subscribe(lambda _state: None, try_to_connect=True)
    seen: set[str] = set()
    try:
        deadline = time.monotonic() + bound
        while seen != set(HOSTS) and time.monotonic() < deadline:
            # Once one address is connected the others follow at once if they are there.
            wait = min(deadline - time.monotonic(), 2.0 if seen else bound)
            waiting = [listener for listener, host in listeners.items() if host not in seen]
            ready, _, _ = select.select(waiting, [], [], max(wait, 0))
            if not ready:
                break
            for listener in ready:
                listener.accept()[0].close()
                seen.add(listeners[listener])
    finally:
        channel.close()
        for listener in listeners:
            listener.close()
    return seen


@pytest.fixture()
def dual_replicas() -> Iterator[list[Replica]]:
    """Two replicas on one port: 127.0.0.1:P and [::1]:P."""
    key = os.urandom(16).hex()
    port = port_free_on(*HOSTS)
    started: list[Replica] = []
    try:
        for host in HOSTS:
            started.append(Replica(key, host=host, port=port))
        yield started
    finally:
        for replica in started:
            replica.kill()


@pytest.fixture(params=["localhost", "dns-server"])
def engine_name(request) -> Iterator[tuple[str, DnsServer | None]]:
    """The one address the gateway is given for GAME's engine, and the DNS server behind it
    when it is this test's own. The replicas start only once the name is known to work."""
    if request.param == "localhost":
        records = _grpc_records("localhost")
        if records != set(HOSTS):
            pytest.skip(
                f"gRPC's resolver gives localhost {sorted(records)} here, not both 127.0.0.1 and ::1 "
                "(the native resolver and no `::1 localhost` line in /etc/hosts?): one record "
                "cannot show a split; the dns-server case covers a name with several records"
            )
        yield f"localhost:{request.getfixturevalue('dual_replicas')[0].port}", None
        return
    port = request.getfixturevalue("dual_replicas")[0].port
    server = DnsServer({NAME: HOSTS})
    try:
        yield server.target(NAME, port), server
    finally:
        server.stop()


@pytest.fixture()
def named(gateway_settings, engine_name):
    """The gateway app with GAME's engine given as that one name."""
    address, _server = engine_name
    settings = replace(gateway_settings, engine_addresses=gateway_settings.engine_addresses | {GAME: address})
    app = create_app(settings)
    yield app
    app.extensions["cultists"].close()


def test_the_name_resolves_to_both_replicas_and_calls_split(named, engine_name, dual_replicas):
    share, served = share_of_first(named.test_client(), dual_replicas)
    assert 0.4 <= share <= 0.6, f"calls per replica (127.0.0.1, ::1): {served}"
    _address, server = engine_name
    if server is not None:  # gRPC asked the server for the name's records, both families
        assert {(NAME, 1), (NAME, 28)} <= set(server.queries), server.queries


def test_a_replica_killed_mid_play_costs_no_move(named, dual_replicas):
    """As with listed replicas (test_engine_replicas.py): every move answered 200 while
    the IPv4 record's replica is killed, none applied twice, play goes on on the other."""
    survivor = dual_replicas[1]
    before = survivor.calls()
    play_while_killing(named.test_client(), named.extensions["cultists"].redis, dual_replicas[0])
    assert survivor.calls() > before
