"""One Redis subscription per process for every event stream it serves.

A table's or ticket's stream waits for nudges on its sharded pub/sub channel (keys.py).
Each stream once held a subscription of its own: a Redis connection (two on a cluster)
and its file descriptors per open stream, taken from the pool ordinary requests use, so
a few thousand watchers starved moves and `/healthz` of connections. Here one reader per
Redis node (one on a single Redis, one per master on a cluster) holds every channel this
process's streams need, with SSUBSCRIBE, and hands each message to the streams on that
channel through an in-memory mailbox. A stream costs a mailbox, not a connection.

Written with threads, locks and queues: under gunicorn's gevent workers (monkey-patched)
those are greenlets and cooperative primitives, one greenlet reading per node; under the
threads of a test client they are threads. Only the reader touches its connection, so no
command races a read: subscribing is asked of the reader (it polls its requests between
reads), and a stream waits for Redis's own SSUBSCRIBE confirmation before it reads the
state it starts from, so nothing published after that read is missed.

Bounded: at most `cap` streams per process; past it `subscribe` is 503 + Retry-After at
once. A stream whose mailbox fills (a client far behind), whose node's connection breaks,
or whose channel's slot moved away ends; its client reconnects with Last-Event-ID and
misses nothing, since every stream reads what it sends from the table's log.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import redis

from services.runtime.redis_client import is_cluster

from .errors import PlatformError
from .metrics import STREAMS_OPEN, STREAMS_REFUSED

log = logging.getLogger("cultists.platform.stream_hub")
T = TypeVar("T")

# Messages one stream may have waiting; a client this far behind is ended (it resumes).
MAILBOX_SIZE = 256
# How often a reader looks at its subscribe/unsubscribe requests between reads.
POLL_SECONDS = 0.02
# How long a new stream waits for its channel's SSUBSCRIBE to be confirmed.
CONFIRM_SECONDS = 10.0
# A reader with no channel for this long closes its connection and ends.
IDLE_SECONDS = 2.0


class Subscription:
    """One stream's view of its channel: messages in order, until it ends.

    Its mailbox is a deque and an Event, not a queue.Queue: thousands of them wait at
    once, and a Queue's three conditions cost memory and stack depth at every waiting
    stream. One reader appends, one stream takes."""

    __slots__ = ("_hub", "_items", "_reader", "_wake", "channel", "ended", "on_message", "since")

    def __init__(self, hub: StreamHub, reader: _Reader, channel: str) -> None:
        self._hub = hub
        self._reader = reader
        self.channel = channel
        # A list, not a deque: a deque's first block is 64 slots (~600 bytes) at every
        # one of thousands of mostly empty mailboxes; this one holds a few at most.
        self._items: list[tuple[bytes, float]] = []
        self._wake = threading.Event()
        self.ended = False  # the hub closed, its connection broke, or it fell behind
        # When the last message returned by get() reached this process (at first: when
        # the subscription was confirmed): a read that began after it sees that change.
        self.since = time.monotonic()
        # A pushed stream (no greenlet waits in get()): called by the reader after each
        # message, and once when it ends; it must only schedule work, never block.
        self.on_message: Callable[[], None] | None = None

    def take(self) -> tuple[bytes, float] | None:
        """The next message and when it arrived, without waiting (a pushed stream)."""
        if self._items:
            item = self._items.pop(0)
            self.since = item[1]
            return item
        return None

    def get(self, timeout: float) -> bytes | None:
        """The next message's data, or None after `timeout` (or once ended: check `ended`)."""
        while not self.ended:
            if self._items:
                data, self.since = self._items.pop(0)
                return data
            self._wake.clear()
            if self._items or self.ended:  # came between the look and the clear
                continue
            if not self._wake.wait(timeout):
                return None
        return None

    def _deliver(self, data: bytes, arrived: float) -> None:
        if len(self._items) >= MAILBOX_SIZE:
            self._end()
            return
        self._items.append((data, arrived))
        if self.on_message is not None:  # pushed: no greenlet waits on the Event
            self.on_message()
        else:
            self._wake.set()

    def _end(self) -> None:
        self.ended = True
        self._wake.set()  # wakes a stream waiting in get()
        if self.on_message is not None:
            self.on_message()

    def close(self) -> None:
        self._hub._release(self)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Channel:
    def __init__(self) -> None:
        self.listeners: set[Subscription] = set()
        self.confirmed = threading.Event()
        self.subscribed = False  # SSUBSCRIBE sent (and no SUNSUBSCRIBE since)
        self.unsubscribing = 0  # SUNSUBSCRIBEs sent whose confirmation has not come yet


class _Reader:
    """The one connection to one Redis node and the greenlet (thread) reading it."""

    def __init__(self, make_client: Any, name: str) -> None:
        self._make_client = make_client
        self.name = name
        self.channels: dict[str, _Channel] = {}
        self._dirty: set[str] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.stopping = False  # idle: it ends, and the hub starts another when needed
        self._pubsub: Any = None
        self._thread = threading.Thread(target=self._run, name=f"stream-hub {name}", daemon=True)
        self._thread.start()

    # -- asked by streams ----------------------------------------------------------------
    def join(self, sub: Subscription) -> _Channel | None:
        """The channel `sub` now listens on, or None if this reader is ending (idle)."""
        with self._lock:
            if self.stopping:
                return None
            channel = self.channels.get(sub.channel)
            if channel is None:
                channel = self.channels[sub.channel] = _Channel()
            channel.listeners.add(sub)
            if not channel.subscribed:
                self._dirty.add(sub.channel)
        return channel

    def leave(self, sub: Subscription) -> None:
        with self._lock:
            channel = self.channels.get(sub.channel)
            if channel is not None and sub in channel.listeners:
                channel.listeners.discard(sub)
                if not channel.listeners:
                    self._dirty.add(sub.channel)

    def close(self) -> None:
        self._closed = True
        self._thread.join(timeout=5)

    # -- the reader ------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._closed and not self.stopping:
            try:
                self._serve()
            except Exception as exc:  # the node went away: its streams end and resume
                log.warning("stream hub %s: %s; its streams end and reconnect", self.name, exc)
                self._drop_all()
                time.sleep(0.5)
        self._drop_all()

    def _serve(self) -> None:
        self._pubsub = self._make_client().pubsub(ignore_subscribe_messages=False)
        idle_since = time.monotonic()
        try:
            while not self._closed:
                self._apply_requests()
                if not self._pubsub.subscribed:
                    # No stream here for a while: end, closing the connection (a process
                    # that serves no stream holds none). Decided under the lock, so no
                    # stream joins a reader that is going.
                    with self._lock:
                        if not self.channels and time.monotonic() - idle_since > IDLE_SECONDS:
                            self.stopping = True
                            return
                    time.sleep(POLL_SECONDS)
                    continue
                idle_since = time.monotonic()
                message = self._pubsub.get_sharded_message(timeout=POLL_SECONDS)
                while message is not None:
                    self._handle(message)
                    message = self._pubsub.get_sharded_message(timeout=0)
        finally:
            pubsub, self._pubsub = self._pubsub, None
            pubsub.close()

    def _apply_requests(self) -> None:
        with self._lock:
            dirty, self._dirty = self._dirty, set()
            subscribe, unsubscribe = [], []
            for name in dirty:
                channel = self.channels.get(name)
                if channel is None:
                    continue
                if channel.listeners and not channel.subscribed:
                    channel.subscribed = True
                    subscribe.append(name)
                elif not channel.listeners and channel.subscribed:
                    channel.subscribed = False
                    channel.unsubscribing += 1
                    channel.confirmed.clear()
                    unsubscribe.append(name)
                elif not channel.listeners and not channel.unsubscribing:
                    del self.channels[name]
        for name in subscribe:
            self._pubsub.ssubscribe(name)
        for name in unsubscribe:
            self._pubsub.sunsubscribe(name)

    def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        name = message["channel"]
        name = name.decode() if isinstance(name, bytes) else name
        with self._lock:
            channel = self.channels.get(name)
            if kind == "smessage":
                listeners = list(channel.listeners) if channel is not None else []
            elif kind == "ssubscribe":
                if channel is not None and channel.subscribed:
                    channel.confirmed.set()
                return
            elif kind == "sunsubscribe":
                if channel is None:
                    return
                if channel.unsubscribing:  # the confirmation of one we sent
                    channel.unsubscribing -= 1
                    if not channel.listeners and not channel.subscribed and not channel.unsubscribing:
                        del self.channels[name]
                    return
                # Not asked for: the channel's slot moved to another node. Its streams end
                # and reconnect (to the new owner); the channel starts afresh.
                ended = list(channel.listeners)
                del self.channels[name]
                for sub in ended:
                    sub._end()
                return
            else:
                return
        arrived = time.monotonic()
        for sub in listeners:
            sub._deliver(message["data"], arrived)

    def _drop_all(self) -> None:
        with self._lock:
            ended = [sub for channel in self.channels.values() for sub in channel.listeners]
            self.channels.clear()
            self._dirty.clear()
        for sub in ended:
            sub._end()


class _Flight:
    """One read in flight that several streams wait on (StreamHub.shared)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None


class StreamHub:
    """Every stream of one process, over one subscription per Redis node."""

    def __init__(
        self, client: Any, cap: int, reads: int = 8, on_idle: Callable[[], None] | None = None
    ) -> None:
        """`client` tells which node owns a channel; `reads` is how many streams may read
        from Redis at once (`reading`); `on_idle` runs whenever the last open stream closes
        (the gateway drops its streams' read connections then)."""
        self._client = client
        self.cap = cap
        self._reads = threading.BoundedSemaphore(reads)
        self._flights: dict[Any, _Flight] = {}
        self._on_idle = on_idle
        self._lock = threading.Lock()
        self._readers: dict[str, _Reader] = {}
        self._open: set[Subscription] = set()
        self._closed = False

    def shared(self, key: Any, since: float, read: Callable[[], T]) -> T:
        """`read()`'s result, shared by the streams that want the same `key` at once.

        A move nudges every stream of its table together, and each would read the same
        table and log lines: one read in flight serves them all. A stream joins a read
        only if it began at or after `since` (when the stream heard of the change it
        reads for, `Subscription.since`), so what it gets is never older than that change;
        otherwise it starts its own. Results are shared: callers must not change them."""
        with self._lock:
            flight = self._flights.get(key)
            mine = flight is None or flight.started < since
            if mine:
                flight = self._flights[key] = _Flight()
        assert flight is not None
        if not mine:
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            return flight.value
        try:
            with self.reading():
                flight.value = read()
        except BaseException as exc:
            flight.error = exc
            raise
        finally:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()
        return flight.value

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """Held by a stream while it reads what a nudge announced: a move that wakes a
        thousand streams has them read a few at a time, over a few connections (a
        cluster's pools refuse past their size instead of waiting)."""
        with self._reads:
            yield

    def check_room(self) -> None:
        """503 at once when this process already serves its cap of streams (a stream's
        first check, before it reads anything)."""
        if len(self._open) >= self.cap:
            STREAMS_REFUSED.inc()
            raise PlatformError(
                503, "too_many_streams", f"this gateway process serves {self.cap} streams at most"
            )

    @property
    def open_streams(self) -> int:
        return len(self._open)

    def subscribe(self, channel: str) -> Subscription:
        """A subscription to `channel`, confirmed by Redis before this returns: what is
        read after it and what is published after that read are not missed between them.
        503 past the cap, when closing, or when Redis does not confirm in time."""
        with self._lock:
            if self._closed:
                raise PlatformError(503, "shutting_down", "the gateway is shutting down; reconnect")
            if len(self._open) >= self.cap:
                STREAMS_REFUSED.inc()
                raise PlatformError(
                    503, "too_many_streams", f"this gateway process serves {self.cap} streams at most"
                )
            while True:
                reader = self._reader_for(channel)
                sub = Subscription(self, reader, channel)
                joined = reader.join(sub)
                if joined is not None:
                    break
                self._readers.pop(reader.name, None)  # it was ending: start another
            self._open.add(sub)
            STREAMS_OPEN.inc()
        if not joined.confirmed.wait(CONFIRM_SECONDS) or sub.ended:
            sub.close()
            raise PlatformError(503, "store_unavailable", "the stream's subscription was not confirmed")
        # A read begun from now on sees every change that was not nudged to this stream.
        sub.since = time.monotonic()
        return sub

    def _reader_for(self, channel: str) -> _Reader:
        if is_cluster(self._client):
            node = self._client.get_node_from_key(channel)
            name, host, port = f"{node.host}:{node.port}", node.host, node.port

            def make() -> Any:  # a plain connection to the node that owns the slot
                return redis.Redis(host=host, port=port)
        else:
            name = "redis"

            def make() -> Any:
                return self._client

        reader = self._readers.get(name)
        if reader is None or reader.stopping:
            reader = self._readers[name] = _Reader(make, name)
        return reader

    def _release(self, sub: Subscription) -> None:
        with self._lock:
            if sub not in self._open:
                return
            self._open.discard(sub)
            STREAMS_OPEN.dec()
            idle = not self._open
        sub._reader.leave(sub)
        if idle and self._on_idle is not None:
            self._on_idle()

    def close(self) -> None:
        """Shutdown: every open stream ends now (its client reconnects elsewhere), new
        ones are refused, and the readers' connections close."""
        with self._lock:
            self._closed = True
            readers = list(self._readers.values())
            self._readers.clear()
            streams = list(self._open)
        for sub in streams:
            sub._end()
        for reader in readers:
            reader.close()
        if self._on_idle is not None:
            self._on_idle()
