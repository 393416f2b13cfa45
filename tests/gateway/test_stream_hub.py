"""Many watchers, one subscription per gateway process (services/platform/stream_hub.py).

The hub on its own, on a real Redis and a real Redis Cluster: every stream hears every
message of its channel over one connection per node, past its cap it refuses at once, and
closing ends every stream. Then the gateway as it runs in production (gunicorn, one gevent
worker, real sockets): cap + 50 streams are opened, the 50 extra are 503 + Retry-After at once,
/healthz answers within a second throughout, every open stream carries every move, and once they close
the worker's Redis connections are back to their count before them."""

from __future__ import annotations

import contextlib
import http.client
import signal
import threading
import time
from urllib.parse import urlparse

import psutil
import pytest
import redis
from redis.cluster import RedisCluster

from services.platform.errors import PlatformError
from services.platform.keys import updates_channel
from services.platform.stream_hub import StreamHub

from .conftest import LiveStore
from .support import wait_for
from .test_gunicorn import call, first_move, open_table, serve


def _client(live_store: LiveStore):
    if live_store.cluster:
        return RedisCluster.from_url(live_store.url)
    return redis.Redis.from_url(live_store.url)


def _redis_ports(live_store: LiveStore) -> set[int]:
    if live_store.cluster:
        return {node.port for node in RedisCluster.from_url(live_store.url).get_nodes()}
    return {urlparse(live_store.url).port}


def test_the_hub_fans_one_subscription_out_to_every_stream(live_store):
    client = _client(live_store)
    hub = StreamHub(client, cap=60)
    try:
        channels = [updates_channel(f"hub-test-{i}") for i in range(6)]
        subs = [hub.subscribe(channels[i % len(channels)]) for i in range(48)]
        # One reader (one connection) per node that owns one of the channels, at most.
        assert len(hub._readers) <= len(_redis_ports(live_store))
        for n in range(5):
            for channel in channels:
                client.spublish(channel, f"{channel}:{n}".encode())
        for sub in subs:
            got = []
            while len(got) < 5:
                message = sub.get(timeout=10)
                assert message is not None, f"{sub.channel} heard only {got}"
                got.append(message.decode())
            assert got == [f"{sub.channel}:{n}" for n in range(5)]
        for sub in subs:
            sub.close()
        assert hub.open_streams == 0
    finally:
        hub.close()
        client.close()


def test_the_hub_refuses_past_its_cap_and_ends_every_stream_on_close(live_store):
    client = _client(live_store)
    hub = StreamHub(client, cap=3)
    try:
        subs = [hub.subscribe(updates_channel("hub-cap")) for _ in range(3)]
        with pytest.raises(PlatformError) as refused:
            hub.subscribe(updates_channel("hub-cap-other"))
        assert (refused.value.status, refused.value.code) == (503, "too_many_streams")
        subs[0].close()  # a place is free again
        subs[0] = hub.subscribe(updates_channel("hub-cap-other"))
        waiting = threading.Thread(target=subs[1].get, args=(30,))
        waiting.start()
        hub.close()
        waiting.join(timeout=10)
        assert not waiting.is_alive(), "a stream waiting for a message did not end on close"
        assert all(sub.ended for sub in subs)
        with pytest.raises(PlatformError) as closing:
            hub.subscribe(updates_channel("hub-cap"))
        assert closing.value.status == 503
    finally:
        hub.close()
        client.close()


CAP = 24
EXTRA = 50  # issue 29: cap + 50 streams, the 50 past the cap refused
TABLES = 4


class Stream:
    """One SSE stream over a real socket, read on its own thread: its events by name."""

    def __init__(self, base: str, path: str) -> None:
        url = urlparse(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        self.conn.request("GET", path)
        self.reply = self.conn.getresponse()
        self.events: list[str] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        if self.reply.status == 200:
            self.thread.start()

    def _read(self) -> None:
        try:
            for raw in self.reply:
                if raw.startswith(b"event: "):
                    self.events.append(raw[7:].decode().strip())
        except (OSError, ValueError, AttributeError):  # closed by the test (http.client drops its fp)
            pass

    def close(self) -> None:
        self.conn.close()


def _redis_connections(pid: int, ports: set[int]) -> int:
    """TCP connections the process holds to the Redis (every node of a cluster)."""
    return sum(
        1
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.raddr and c.raddr.port in ports and c.status == psutil.CONN_ESTABLISHED
    )


def test_a_capped_gateway_refuses_extra_streams_and_stays_healthy(live_store, engines, tmp_path):
    ports = _redis_ports(live_store)
    extra = {"GATEWAY_STREAM_CAP": str(CAP)}
    with serve(live_store, engines, tmp_path, workers=1, extra_env=extra) as (base, proc):
        [worker] = psutil.Process(proc.pid).children()
        health: list[float] = []
        unhealthy: list[str] = []
        stop = threading.Event()

        def poll_health() -> None:  # /healthz all along, from its own connection
            while not stop.is_set():
                start = time.monotonic()
                try:
                    answer = call(f"{base}/healthz")
                except OSError as exc:
                    answer = repr(exc)
                if answer != {"status": "ok"}:
                    unhealthy.append(str(answer))
                health.append(time.monotonic() - start)
                time.sleep(0.05)

        poller = threading.Thread(target=poll_health, daemon=True)
        poller.start()
        tables = [open_table(base) for _ in range(TABLES)]
        first_move(base, *tables[0])  # every kind of request has been served once
        # The requests' pool grows to what this test's ordinary requests need at once
        # (a few in parallel) before the count that the streams are measured against.
        warm = [
            threading.Thread(target=lambda t=t: [call(f"{base}/api/tables/{t[0]}/view") for _ in range(5)])
            for t in tables * 2
        ]
        for thread in warm:
            thread.start()
        for thread in warm:
            thread.join(timeout=60)
        time.sleep(1)
        idle = _redis_connections(worker.pid, ports)

        streams = [Stream(base, f"/api/tables/{tables[i % TABLES][0]}/events/stream") for i in range(CAP)]
        assert all(s.reply.status == 200 for s in streams)
        wait_for(lambda: all("state" in s.events for s in streams), timeout=60, what="every stream's state")
        # The streams' Redis connections: one subscription per node, and the small pool
        # their reads share, whatever their number.
        held = _redis_connections(worker.pid, ports) - idle
        assert held <= len(ports) * 9, f"{CAP} streams hold {held} Redis connections"

        refused = []
        for _ in range(EXTRA):
            start = time.monotonic()
            more = Stream(base, f"/api/tables/{tables[0][0]}/events/stream")
            refused.append((more.reply.status, more.reply.getheader("Retry-After"), time.monotonic() - start))
            more.close()
        assert all(status == 503 and after and after.isdigit() for status, after, _ in refused), refused
        # Refused at once, not after waiting for a slot (1 s: a loaded machine's slack).
        assert max(took for _, _, took in refused) < 1, f"slowest refusal {max(t for *_, t in refused):.2f} s"

        for tid, tokens in tables:  # a move at every table: every stream hears its own
            first_move(base, tid, tokens)
        wait_for(
            lambda: all("update" in s.events for s in streams),
            timeout=60,
            what="every stream carrying every move",
        )

        for s in streams:
            s.close()
        counts = [_redis_connections(worker.pid, ports)]
        deadline = time.monotonic() + 30
        while counts[-1] > idle and time.monotonic() < deadline:
            time.sleep(0.5)
            counts.append(_redis_connections(worker.pid, ports))
        assert counts[-1] <= idle, f"Redis connections after the streams closed: {counts[-5:]}, idle {idle}"
        stop.set()
        poller.join(timeout=30)
        assert health and not unhealthy, unhealthy
        assert max(health) < 1, f"slowest /healthz {max(health):.2f} s (issue 29: < 1 s throughout)"


def test_sigterm_ends_open_streams_at_once(live_store, engines, tmp_path):
    """A stream lasts minutes; gunicorn's graceful shutdown (graceful_timeout 20 s) would
    wait for it and then cut it off. The worker ends its streams as SIGTERM arrives, so
    the gateway is gone in a few seconds and every stream ended cleanly (its clients
    reconnect elsewhere from Last-Event-ID)."""
    with serve(live_store, engines, tmp_path, workers=1) as (base, proc):
        tid, _ = open_table(base)
        streams = [Stream(base, f"/api/tables/{tid}/events/stream") for _ in range(5)]
        wait_for(lambda: all("state" in s.events for s in streams), timeout=60, what="every stream's state")
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        for s in streams:
            s.thread.join(timeout=30)
        assert not any(s.thread.is_alive() for s in streams), "a stream outlived the shutdown"
        assert proc.wait(timeout=30) == 0
        assert time.monotonic() - start < 10, "the shutdown waited for the streams"


def test_streams_share_a_read_only_if_it_began_after_the_change_they_heard(live_store):
    """One read in flight serves the streams that heard of a change before it began;
    a stream that heard of one after it began reads again (it might miss that change)."""
    client = _client(live_store)
    hub = StreamHub(client, cap=5)
    calls: list[int] = []
    gate = threading.Event()

    def read() -> int:
        calls.append(1)
        number = len(calls)
        gate.wait(30)
        return number

    results: list[int] = []
    heard = time.monotonic()
    first = threading.Thread(target=lambda: results.append(hub.shared("k", heard, read)))
    first.start()
    wait_for(lambda: calls, what="the first read in flight")
    joiner = threading.Thread(target=lambda: results.append(hub.shared("k", heard, read)))
    joiner.start()
    time.sleep(1)  # the joiner is waiting on the first read
    late = threading.Thread(target=lambda: results.append(hub.shared("k", time.monotonic(), read)))
    late.start()
    wait_for(lambda: len(calls) == 2, what="the late stream's own read")
    gate.set()
    for thread in (first, joiner, late):
        thread.join(timeout=30)
    assert sorted(results) == [1, 1, 2]
    hub.close()
    client.close()


def test_a_pushed_stream_resumes_from_its_cursor_and_keeps_alive_in_chunks(live_store, engines, tmp_path):
    """Under gunicorn the worker hands an open stream to the process's fan-out
    (services/gateway/pushed_streams.py). Its body is still HTTP/1.1 chunks, it resumes
    from Last-Event-ID with the log after it (no gap, nothing twice), it carries a move
    made after it opened, and with nothing happening it sends keep-alives (0.5 s
    heartbeats here)."""
    with serve(live_store, engines, tmp_path, workers=1) as (base, _proc):
        tid, tokens = open_table(base)
        first_move(base, tid, tokens)
        log = call(f"{base}/api/tables/{tid}/events?after=-1&limit=1000")["events"]
        assert len(log) >= 2
        url = urlparse(base)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        conn.request("GET", f"/api/tables/{tid}/events/stream", headers={"Last-Event-ID": str(log[0]["id"])})
        reply = conn.getresponse()
        assert reply.status == 200 and reply.getheader("Transfer-Encoding") == "chunked"
        lines: list[bytes] = []

        def read() -> None:
            # Closed by the test at the end (http.client drops its fp), as Stream._read is.
            with contextlib.suppress(OSError, ValueError, AttributeError):
                for raw in reply:
                    lines.append(raw)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()

        def ids() -> list[int]:
            return [int(raw[4:]) for raw in list(lines) if raw.startswith(b"id: ")]

        try:
            wait_for(lambda: b"event: state\n" in lines, timeout=30, what="the stream's state")
            wait_for(lambda: ids()[-1:] == [log[-1]["id"]], timeout=30, what="the log after the cursor")
            assert ids() == [e["id"] for e in log[1:]], "resumed after Last-Event-ID, no gap, none twice"
            version = call(f"{base}/api/tables/{tid}")["version"]
            wait_for(lambda: b": keepalive\n" in lines, timeout=30, what="a keep-alive while nothing moves")
            first_move(base, tid, tokens)  # the other seat's turn now, or the next round's
            wait_for(lambda: b"event: update\n" in lines, timeout=30, what="the move's update")
            assert call(f"{base}/api/tables/{tid}")["version"] > version
        finally:
            conn.close()
            reply.close()
