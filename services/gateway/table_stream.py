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

from .pushed_streams import push
from .sse import KEEPALIVE, RETRY, frame

T = TypeVar("T")
END = frame("end", {})


class TableStream:
    """One open stream of one table (a seat's, or a spectator's with `seat` None)."""

    __slots__ = (
        "cursor", "finished", "heartbeat", "hub", "pending", "reads", "seat", "start_response",
        "stop_at", "subscription", "table_id",
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
        # Log entries sent as `log` events that the next update carries too (its `events`):
        # on connecting, those newer than the state sent; after that, every one. The
        # shared entries themselves, never copies; a contiguous run of ids up to `cursor`.
        self.pending: list[dict[str, Any]] = []
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

    def _state(self) -> tuple[bytes, dict[str, Any]] | None:
        """The `state` event's bytes and the state; None once the table is gone."""
        state = self.reads.stream_state(self.table_id, self.seat)
        if state is None:
            return None
        return frame("state", state), state

    def _update(self, message: bytes) -> tuple[bytes, bool] | None:
        """The `update` event's bytes (the nudge, the state after it, read after the log
        so it is never older than the events, and the pending entries) and whether the
        game is over; None once the table is gone."""
        state = self.reads.stream_state(self.table_id, self.seat)
        if state is None:
            return None
        update = {**orjson.loads(message), **state, "events": self.pending}
        return frame("update", update), state["status"] == "finished"

    def _log(self, start: int) -> tuple[bytes, list[dict[str, Any]]]:
        """The log lines from `start` as `log` events, each entry as GET .../events gives it
        (its id too), and those entries."""
        entries = self.reads.store.log(self.table_id, start)
        events = [{"id": start + i, **entry} for i, entry in enumerate(entries)]
        data = b"".join(frame("log", e, e["id"]) for e in events)
        return data, events

    def _log_since_cursor(self, since: float, cache: dict | None, newer_than: int | None = None) -> bytes:
        """The new log lines; they join `pending` (on connecting only those newer than the
        version `newer_than` the state showed)."""
        start = self.cursor + 1
        data, events = self._shared(("log", self.table_id, start), since, lambda: self._log(start), cache)
        if events:
            self.cursor = events[-1]["id"]
            if newer_than is None:
                self.pending.extend(events)
            else:
                self.pending.extend(e for e in events if e["version"] > newer_than)
        return data

    def first(self) -> tuple[bytes, bool]:
        """The opening: the table as it is now (read after subscribing, so a move made
        meanwhile is in it or still comes as an update: a client that connects, or
        reconnects, mid-turn learns at once whose turn it is and what it may do), then the
        log after the client's cursor. True: the stream is over after it."""
        since = self.subscription.since
        found = self._shared(("state", self.table_id, self.seat), since, self._state, None)
        if found is None:
            return RETRY + END, True
        event, state = found
        self.finished = state["status"] == "finished"
        data = RETRY + event + self._log_since_cursor(since, None, newer_than=state["version"])
        return (data + END, True) if self.finished else (data, False)

    def catch_up(self, since: float) -> bytes:
        """Log lines written since the last look (a keep-alive's round: a change whose
        message is still on its way is sent now; the next update carries them too)."""
        return self._log_since_cursor(since, None)

    def after(self, message: bytes, since: float, cache: dict | None = None) -> tuple[bytes, bool]:
        """What a nudge (`message`, heard at `since`) sends: the new log lines, then the
        `update` carrying them. True: the stream is over after it."""
        log = self._log_since_cursor(since, cache)
        found = self._pending_update(message, since, cache)
        if found is not None and found[1]:
            # The state is read after the log, so the last move can land between the two:
            # the state says the game is over while that move's lines were not read. They
            # are read now (nothing is written after the end: a move's lines and its state
            # are one commit) and the update is built again to carry them, so a stream never
            # ends short of the last turn.
            late = self._log_since_cursor(time.monotonic(), cache)
            if late:
                log += late
                found = self._pending_update(message, since, cache)
        self.pending = []
        if found is None:
            return log + END, True
        update, self.finished = found
        return (log + update + END, True) if self.finished else (log + update, False)

    def _pending_update(self, message: bytes, since: float, cache: dict | None) -> tuple[bytes, bool] | None:
        """The update carrying `pending`: streams with the same pending run of the log
        (most of them: every one in step) share its bytes."""
        first_pending = self.pending[0]["id"] if self.pending else self.cursor + 1
        key = ("update", self.table_id, self.seat, message, first_pending, self.cursor)
        return self._shared(key, since, lambda: self._update(message), cache)

    def after_in_step(self, message: bytes, since: float, cache: dict) -> tuple[bytes, bool]:
        """`after` for a fan-out pass: streams of one table in step (the same seat, the same
        last line sent, the same pending run, the same nudge) get the same bytes and end at
        the same cursor, so the whole outcome is looked up once per pass, not rebuilt per
        stream. With 50 watchers a table, the per-stream work of a move is then one lookup
        and one send (pushed_streams.py), not two shared reads' lookups and key building."""
        first_pending = self.pending[0]["id"] if self.pending else None
        key = ("after", self.table_id, self.seat, self.cursor, first_pending, message, since)
        found = cache.get(key)
        if found is None:
            data, done = self.after(message, since, cache)
            cache[key] = (data, done, self.cursor, self.finished)
            return data, done
        data, done, self.cursor, self.finished = found
        self.pending = []
        return data, done

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
                    yield KEEPALIVE + self.catch_up(self.subscription.since)
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
