"""What one table's event stream sends, built once per change and shared by its streams.

A move nudges every stream of its table at once. Each stream used to read the state,
merge it into the nudge and encode the JSON itself, so a table with 50 watchers encoded
the same update 50 times, in the greenlets that also serve moves. Here the bytes of an
event are the shared result (StreamHub.shared, or a fan-out pass's own cache): the state
is read and encoded once per (change, seat) and the log lines once per (change, first
line), and every stream on that table sends the same bytes object.

A stream is sent one of two ways. Under gunicorn's gevent worker the worker hands the
connection over once the headers are written (`hand_off`, services/runtime/
gunicorn_worker.py): the opening is sent at once, and later events are pushed to the
socket by the process's fan-out (pushed_streams.py), so an open stream keeps no greenlet,
request or response objects. Anywhere else (the test client, another server) the stream
is iterated as an ordinary WSGI body, one blocking wait per stream.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import orjson

from services.platform.stream_hub import StreamHub, Subscription
from services.platform.tables import TableService

from .pushed_streams import KEEPALIVE, push

T = TypeVar("T")
RETRY = b"retry: 1000\n\n"
END = b"event: end\ndata: {}\n\n"


class TableStream:
    """One open stream of one table (a seat's, or a spectator's with `seat` None)."""

    __slots__ = (
        "cursor", "finished", "heartbeat", "hub", "reads", "seat", "start_response", "stop_at",
        "subscription", "table_id",
    )  # fmt: skip

    def __init__(
        self,
        hub: StreamHub,
        reads: TableService,
        subscription: Subscription,
        table_id: str,
        seat: int | None,
        after: int,
        max_seconds: float,
        heartbeat: float,
    ) -> None:
        self.hub = hub
        self.reads = reads
        self.subscription = subscription
        self.table_id = table_id
        self.seat = seat
        self.cursor = after  # the last log line sent (its event id)
        self.finished = False
        self.stop_at = time.monotonic() + max_seconds  # then it ends; the client resumes
        self.heartbeat = heartbeat
        # Set by StreamResponse under a server that can take the connection over.
        self.start_response: Any = None

    # -- what it sends -----------------------------------------------------------------
    def _shared(self, key: Any, since: float, read: Callable[[], T], cache: dict | None) -> T:
        if cache is None:
            return self.hub.shared(key, since, read)
        found = cache.get((key, since), cache)
        if found is cache:  # not read in this pass yet: every read here began after `since`
            found = cache[(key, since)] = self.hub.shared(key, since, read)
        return found

    def _state(self, prefix: bytes, message: bytes | None) -> tuple[bytes, bool] | None:
        """The `state` (first) or `update` event's bytes and whether the game is over; None
        once the table is gone."""
        state = self.reads.stream_state(self.table_id, self.seat)
        if state is None:
            return None
        body = state if message is None else {**orjson.loads(message), **state}
        return prefix + orjson.dumps(body) + b"\n\n", state["status"] == "finished"

    def _log(self, start: int) -> tuple[bytes, int]:
        """The log lines from `start` as `log` events (ids from `start`), and how many."""
        entries = self.reads.store.log(self.table_id, start)
        parts = [
            b"id: %d\nevent: log\ndata: %s\n\n" % (start + i, orjson.dumps(entry))
            for i, entry in enumerate(entries)
        ]
        return b"".join(parts), len(parts)

    def _log_since_cursor(self, since: float, cache: dict | None) -> bytes:
        start = self.cursor + 1
        data, count = self._shared(("log", self.table_id, start), since, lambda: self._log(start), cache)
        self.cursor += count
        return data + END if self.finished else data

    def first(self) -> tuple[bytes, bool]:
        """The opening: the table as it is now (read after subscribing, so a move made
        meanwhile is in it or still comes as an update: a client that connects, or
        reconnects, mid-turn learns at once whose turn it is and what it may do), then the
        log after the client's cursor. True: the stream is over after it."""
        since = self.subscription.since
        found = self._shared(
            ("state", self.table_id, self.seat),
            since,
            lambda: self._state(b"event: state\ndata: ", None),
            None,
        )
        if found is None:
            return RETRY + END, True
        state, self.finished = found
        return RETRY + state + self._log_since_cursor(since, None), self.finished

    def after(self, message: bytes, since: float, cache: dict | None = None) -> tuple[bytes, bool]:
        """What a nudge (`message`, heard at `since`) sends: the `update` (the nudge with
        the state after it), then any new log lines. True: the stream is over after it."""
        found = self._shared(
            ("update", self.table_id, self.seat, message),
            since,
            lambda: self._state(b"event: update\ndata: ", message),
            cache,
        )
        if found is None:
            return END, True
        update, self.finished = found
        return update + self._log_since_cursor(since, cache), self.finished

    # -- sent as a WSGI body (a greenlet or thread per stream) ----------------------------
    def __iter__(self) -> Iterator[bytes]:
        try:
            data, done = self.first()
            yield data
            while not done:
                if time.monotonic() > self.stop_at:
                    return  # the client reconnects with Last-Event-ID
                message = self.subscription.get(timeout=self.heartbeat)
                if self.subscription.ended:
                    return  # shutdown, a lost subscription, or far behind: it resumes
                if message is None:
                    yield KEEPALIVE
                    continue
                data, done = self.after(message, self.subscription.since)
                yield data
        finally:
            self.subscription.close()

    def close(self) -> None:
        """The body is dropped unsent (a HEAD request, a server that never iterated it)."""
        self.subscription.close()

    # -- pushed (the connection handed over by the server) --------------------------------
    def hand_off(self, fd: int, chunked: bool) -> None:
        """Takes the connection `fd` (the response's headers already sent; `chunked`: its
        body is framed in chunks): sends the opening and leaves the rest to the fan-out."""
        self.start_response = None  # it holds the server's request and response objects
        push(self, fd, chunked)
