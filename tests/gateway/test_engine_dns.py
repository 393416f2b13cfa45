"""One DNS name with a record per replica, as a k8s headless Service gives: the gateway,
told only that name, finds both replicas through gRPC's own resolver and balances over
them (round_robin), and a replica killed mid-play costs no move a 503
(services/platform/engine_channels.py).

The two replicas are real `cultists serve` processes on one port number, one bound to
127.0.0.1 and one to [::1], so they are exactly the A and the AAAA record of one name. Two
names are tried:

- `localhost`, resolved by the machine's own resolver. Many machines give both records
  (/etc/hosts lists `::1 localhost`); where this one gives a single address the case is
  skipped, saying so: a name with one record cannot show a split.
- a name of this test's own DNS server (tests/support/dns_server.py), a real server on a
  loopback UDP port that gRPC's resolver asks over the wire (`dns://<server>/<name>:<port>`),
  as it asks the cluster's DNS for a Service: this one runs everywhere.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from dataclasses import replace

import pytest

from services.gateway import create_app
from tests.support.dns_server import DnsServer

from .replicas import GAME, Replica, play_while_killing, port_free_on, share_of_first

HOSTS = ("127.0.0.1", "::1")
NAME = "engines.cultists.test"


def _localhost_records() -> set[str]:
    try:
        found = socket.getaddrinfo("localhost", None, type=socket.SOCK_STREAM)
    except OSError:
        return set()
    return {str(info[4][0]) for info in found}


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
        records = _localhost_records()
        if not set(HOSTS) <= records:
            pytest.skip(
                f"localhost resolves to {sorted(records)} here, not to both 127.0.0.1 and ::1 "
                "(no `::1 localhost` line in /etc/hosts): one record cannot show a split; "
                "the dns-server case covers a name with several records"
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
