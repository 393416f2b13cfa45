"""One server-sent event as the bytes a stream writes: every stream of the API (a table's,
a matchmaking ticket's) frames its events here, so they read alike to a client."""

from __future__ import annotations

from typing import Any

import orjson

# A client that lost its stream tries again after a second (the stream's first line).
RETRY = b"retry: 1000\n\n"
# A comment line: keeps proxies from closing a quiet stream, ignored by EventSource.
KEEPALIVE = b": keepalive\n\n"


def frame(event: str, data: Any, event_id: int | None = None) -> bytes:
    """`event` with `data` as one JSON line; `event_id` becomes its `id:` (what a client
    sends back as Last-Event-ID), for the events a stream can resume after."""
    head = b"id: %d\n" % event_id if event_id is not None else b""
    return head + b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"
