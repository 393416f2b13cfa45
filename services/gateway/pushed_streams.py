"""The process's fan-out: open streams pushed to their sockets, with no greenlet each.

A stream served as a WSGI body keeps, for as long as it is open (minutes), its
connection's greenlet (its C stack saved on the heap, its own Python frame stack), the
server's request, response and environ, Flask's response and its iterators: about 30 KB
a stream, measured with 2,000 open on one gevent worker (bench/streams.py). A pushed
stream keeps its socket, its TableStream and its subscription's mailbox.

Under gunicorn's gevent worker the connection is handed over after the headers
(TableStream.hand_off): the opening is sent there, in the connection's greenlet, which
then ends. After that a message on a table's channel wakes that channel's pump, one
greenlet per channel with news: it takes each stream's waiting messages in order, builds
each event's bytes once for the whole pass (TableStream.after with the pass's cache) and
sends them with a non-blocking send. A client whose socket buffer is full gets a
flusher greenlet of its own until it drains; past PENDING_LIMIT bytes waiting it is
ended, like a client whose mailbox fills, and resumes from Last-Event-ID. One ticker
sends keep-alives to streams that sent nothing since its last tick and ends streams past
their age, so their clients reconnect as a body-served stream's would.

Every guarantee of the body-served stream holds: the same bytes in the same order, the
opening read after the subscription was confirmed, the cap and shutdown (the hub ends
every subscription; its stream's socket closes and the client resumes elsewhere).
"""

from __future__ import annotations

import _socket
import contextlib
import logging
import time
from typing import Any, Protocol

import gevent
from gevent.socket import wait_write

from services.platform.stream_hub import Subscription
from services.runtime import heap

from .sse import KEEPALIVE

log = logging.getLogger("cultists.gateway.pushed_streams")

# Bytes a slow client may have waiting in the process (beyond its socket's buffer).
PENDING_LIMIT = 256 * 1024
# After this many streams opened the heap is trimmed (heap.py), a second after the last
# trim at most: a crowd's peak is given back while it is still arriving, not minutes on.
TRIM_AFTER_OPENED = 100
TRIM_SECONDS = 1.0
# Streams a pump or the ticker serves before it lets other greenlets run: a move's
# request whose Redis or engine answer came in waits behind at most this many sends,
# not behind its table's every watcher (50 a table in bench/streams.py, about 1 ms of
# sends; 16 is about a third of that, for three extra switches a move).
SLICE = 16
# How long a flusher waits for a full socket to take more before ending the stream.
SEND_SECONDS = 30.0


class TableStream(Protocol):
    """What the fan-out needs of a stream (services/gateway/table_stream.py's)."""

    subscription: Subscription
    heartbeat: float
    stop_at: float

    def first(self) -> tuple[bytes, bool]: ...

    def after(self, message: bytes, since: float, cache: dict | None = None) -> tuple[bytes, bool]: ...

    def after_in_step(self, message: bytes, since: float, cache: dict) -> tuple[bytes, bool]: ...


class _Pushed:
    """One handed-over stream: its socket and what it could not send yet."""

    __slots__ = ("chunked", "closed", "pending", "pending_bytes", "quiet", "sock", "stream", "watcher")

    def __init__(self, stream: TableStream, sock: Any, chunked: bool) -> None:
        self.stream = stream
        self.sock = sock
        self.chunked = chunked  # each send framed as one HTTP/1.1 chunk
        self.pending: list[bytes] | None = None  # a flusher is sending these
        self.pending_bytes = 0
        self.quiet = False  # nothing sent since the ticker's last tick
        self.closed = False
        self.watcher: Any = None  # readable: the client closed (or sent what is ignored)


class _Fanout:
    """Every pushed stream of this process (one per process: `_FANOUT`)."""

    def __init__(self) -> None:
        self.streams: set[_Pushed] = set()
        self._ready: dict[str, list[_Pushed]] = {}  # channel -> streams with news
        self._pumps: set[str] = set()
        self._ticker: Any = None
        self._opened = 0  # since the heap was last trimmed
        self._trimming = False

    # -- arrivals ----------------------------------------------------------------------
    def add(self, stream: TableStream, fd: int, chunked: bool) -> None:
        sock = _socket.socket(fileno=fd)
        sock.setblocking(False)
        pushed = _Pushed(stream, sock, chunked)
        self._opened += 1
        if self._opened >= TRIM_AFTER_OPENED and not self._trimming:
            self._trimming = True
            gevent.spawn_later(TRIM_SECONDS, self._trim)
        try:
            data, done = stream.first()
            # In the connection's greenlet, which may wait: a resumed stream's opening can
            # be a whole game's log, past any socket buffer and PENDING_LIMIT.
            view = memoryview(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            while view:
                wait_write(fd, timeout=SEND_SECONDS)
                with contextlib.suppress(BlockingIOError):
                    view = view[sock.send(view) :]
        except OSError:  # the client went away (or took nothing for SEND_SECONDS)
            self.close(pushed)
            return
        except Exception:
            self.close(pushed)
            raise
        if done:
            self.close(pushed)
            return
        self.streams.add(pushed)  # only now: the ticker's keep-alives come after the opening
        heartbeat = stream.heartbeat
        # A client that goes away is seen at once (its socket turns readable at EOF), so
        # its subscription is released then, not at the next send that fails.
        pushed.watcher = gevent.get_hub().loop.io(fd, 1)
        pushed.watcher.start(self._readable, pushed)
        channel = stream.subscription.channel
        stream.subscription.on_message = lambda: self._wake(channel, pushed)
        if stream.subscription._items or stream.subscription.ended:  # came during the opening
            self._wake(channel, pushed)
        if self._ticker is None:
            self._ticker = gevent.spawn(self._tick, heartbeat)

    def _wake(self, channel: str, pushed: _Pushed) -> None:
        """Called by the hub's reader: schedules, never blocks."""
        self._ready.setdefault(channel, []).append(pushed)
        if channel not in self._pumps:
            self._pumps.add(channel)
            gevent.spawn(self._pump, channel)

    def _pump(self, channel: str) -> None:
        try:
            while True:
                batch = self._ready.pop(channel, None)
                if not batch:
                    return
                cache: dict = {}  # this pass's events, built once for every stream here
                for i, pushed in enumerate(dict.fromkeys(batch)):
                    if i and not i % SLICE:
                        gevent.sleep(0)
                    try:
                        self._serve(pushed, cache)
                    except Exception as exc:  # a store error: this stream ends and resumes
                        log.warning("stream of %s: %s; it ends and resumes", channel, exc)
                        self.close(pushed)
        finally:
            self._pumps.discard(channel)
            if self._ready.get(channel):  # woken as it ended
                self._pumps.add(channel)
                gevent.spawn(self._pump, channel)

    def _serve(self, pushed: _Pushed, cache: dict) -> None:
        sub = pushed.stream.subscription
        parts: list[bytes] = []
        done = False
        while not pushed.closed and not done:
            item = sub.take()
            if item is None:
                break
            data, done = pushed.stream.after_in_step(item[0], item[1], cache)
            parts.append(data)
        if not parts:
            pass
        elif len(parts) == 1 and pushed.chunked:
            # The common case, one event for a stream in step with its table: the chunk is
            # framed once per pass (its bytes are shared), not copied again per stream.
            data = parts[0]
            framed = cache.get(id(data))
            if framed is None or framed[0] is not data:
                framed = cache[id(data)] = (data, b"%x\r\n%s\r\n" % (len(data), data))
            self.send(pushed, framed[1], framed=True)
        else:
            self.send(pushed, parts[0] if len(parts) == 1 else b"".join(parts))
        if done or sub.ended:
            self.close(pushed)  # over, or shutdown / lost subscription / far behind

    def _readable(self, pushed: _Pushed) -> None:
        """In the hub's loop: must not block. A client sends nothing on a stream; EOF or
        an error means it is gone."""
        try:
            if pushed.sock.recv(4096):
                return  # bytes a client should not send: ignored
        except BlockingIOError:
            return
        except OSError:
            pass
        pushed.watcher.stop()
        gevent.spawn(self.close, pushed)

    # -- sending -------------------------------------------------------------------------
    def send(self, pushed: _Pushed, data: bytes, framed: bool = False) -> None:
        """Sends `data` now, or leaves it to a flusher; `framed`: already one chunk."""
        if pushed.closed or not data:
            return
        if pushed.chunked and not framed:
            data = b"%x\r\n%s\r\n" % (len(data), data)
        pushed.quiet = False
        if pushed.pending is not None:  # a flusher is at work: after what it has
            pushed.pending.append(data)
            pushed.pending_bytes += len(data)
            if pushed.pending_bytes > PENDING_LIMIT:
                self.close(pushed)  # far behind: it resumes from Last-Event-ID
            return
        try:
            sent = pushed.sock.send(data)
        except BlockingIOError:
            sent = 0
        except OSError:
            self.close(pushed)  # the client went away
            return
        if sent < len(data):
            rest = data[sent:]
            pushed.pending, pushed.pending_bytes = [rest], len(rest)
            gevent.spawn(self._flush, pushed)

    def _flush(self, pushed: _Pushed) -> None:
        try:
            while pushed.pending and not pushed.closed:
                data = pushed.pending.pop(0)
                pushed.pending_bytes -= len(data)
                view = memoryview(data)
                while view and not pushed.closed:
                    wait_write(pushed.sock.fileno(), timeout=SEND_SECONDS)
                    try:
                        view = view[pushed.sock.send(view) :]
                    except BlockingIOError:
                        continue
            pushed.pending = None
        except OSError:  # the client went away, or took nothing for SEND_SECONDS
            self.close(pushed)

    def close(self, pushed: _Pushed) -> None:
        if pushed.closed:
            return
        if pushed.chunked and pushed.pending is None:  # the body's end, if it fits now
            with contextlib.suppress(OSError):
                pushed.sock.send(b"0\r\n\r\n")
        pushed.closed = True
        pushed.pending = None
        if pushed.watcher is not None:
            pushed.watcher.stop()
            pushed.watcher = None
        self.streams.discard(pushed)
        pushed.stream.subscription.on_message = None
        pushed.stream.subscription.close()
        pushed.sock.close()

    def _trim(self) -> None:
        self._opened = 0
        self._trimming = False
        heap.trim()

    # -- keep-alives and age -------------------------------------------------------------
    def _tick(self, heartbeat: float) -> None:
        while True:
            gevent.sleep(heartbeat)
            now = time.monotonic()
            for i, pushed in enumerate(list(self.streams)):
                if i and not i % SLICE:
                    gevent.sleep(0)
                if pushed.closed:
                    continue
                if now > pushed.stream.stop_at:
                    self.close(pushed)  # the client reconnects with Last-Event-ID
                elif pushed.quiet:
                    self.send(pushed, KEEPALIVE)
                else:
                    pushed.quiet = True


_FANOUT = _Fanout()


def push(stream: TableStream, fd: int, chunked: bool) -> None:
    """Takes over `stream`'s connection `fd` (see the module's docstring)."""
    _FANOUT.add(stream, fd, chunked)


def open_count() -> int:
    """Pushed streams open in this process."""
    return len(_FANOUT.streams)
