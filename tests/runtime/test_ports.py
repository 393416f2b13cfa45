"""Busy ports are named with what holds them, and a supervised part whose port another
process holds is reported as unable to bind it at once, not after a health timeout."""

from __future__ import annotations

import os
import socket
import sys
import time

import pytest

from services.runtime.ports import PortsBusy, PortUse, check_ports, free_port, refuse_busy
from services.runtime.supervisor import PortTaken, ProcessSpec, Supervisor


@pytest.fixture()
def held():
    """A port this test process listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_check_ports_names_the_busy_ones_and_their_holder(held):
    free = free_port()
    busy = check_ports([PortUse("gateway", held, "GATEWAY_PORT"), PortUse("engine", free, "ENGINE_PORT_X")])
    assert [(b.what, b.port) for b in busy] == [("gateway", held)]
    assert f"pid {os.getpid()} (" in busy[0].holder
    with pytest.raises(PortsBusy) as refused:
        refuse_busy(busy)
    assert str(refused.value).startswith(f"port {held} (gateway) is in use by pid {os.getpid()}")
    assert str(refused.value).endswith("stop what holds it, or move it with GATEWAY_PORT=<port>")
    refuse_busy([])  # nothing busy: nothing raised


def test_a_port_is_checked_on_the_address_given(held):
    """IPv4 and IPv6 addresses of one host are separate: 127.0.0.1:P held leaves [::1]:P
    free (two engine replicas on one port, the two records of `localhost`), and a port
    held on ::1 is busy there."""
    assert check_ports([PortUse("engine", held, None)], "::1") == []
    with socket.socket(socket.AF_INET6) as v6:
        v6.bind(("::1", held))
        v6.listen()
        assert [b.port for b in check_ports([PortUse("engine", held, None)], "::1")] == [held]


def test_a_part_whose_port_is_held_by_another_process_fails_at_once(held):
    sup = Supervisor()
    sup.start(ProcessSpec("sleeper", [sys.executable, "-c", "import time; time.sleep(60)"]))
    try:
        started = time.monotonic()
        with pytest.raises(
            PortTaken, match=rf"sleeper cannot bind port {held}: it is in use by pid {os.getpid()}"
        ):
            sup.wait_until_listening("sleeper", held, timeout=60)
        assert time.monotonic() - started < 30  # far from the 60 s timeout it once waited out
    finally:
        sup.stop_all(timeout=5)


def test_a_part_listening_on_its_own_port_is_ready():
    port = free_port()
    sup = Supervisor()
    sup.start(ProcessSpec("web", [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"]))
    try:
        sup.wait_until_listening("web", port, timeout=60)  # the part's own listener: no PortTaken
        assert sup.foreign_listener("web", port) is None
    finally:
        sup.stop_all(timeout=5)
