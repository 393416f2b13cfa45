"""The gateway's gunicorn worker: gevent's, answering unreadable requests in the API's shape.

Here, not in services/gateway: gunicorn's master imports its worker class before it forks
and before gevent patches anything, so this module imports nothing of the app (no Flask,
Redis or gRPC loaded ahead of the patch).

Gunicorn refuses a request it cannot parse (a request line or header past its limits, a
malformed line or header) before any app runs, with a small HTML page and a 400, so a
client that sent a long query got something it could not parse. This worker answers those
with the API's error document (`{"error": {"code", "message"}}`, JSON) and the status
that says why: 414 `request_line_too_long`, 431 `headers_too_large`, 400 `malformed` for
the rest. Everything else (a 500 of gunicorn's own, a TLS failure) is gunicorn's as before.

The limits gunicorn applies are set above the API's own (deploy/gunicorn.conf.py,
services/gateway/request_bounds.py), so most long heads get the app's answer; this one
is for heads past even those.
"""

from __future__ import annotations

import json
import os

from gunicorn.http.errors import (
    InvalidHeader,
    InvalidHeaderName,
    InvalidHTTPVersion,
    InvalidRequestLine,
    InvalidRequestMethod,
    InvalidSchemeHeaders,
    LimitRequestHeaders,
    LimitRequestLine,
    ObsoleteFolding,
)
from gunicorn.util import write_nonblock
from gunicorn.workers.ggevent import GeventWorker

_REASONS = {400: "Bad Request", 414: "URI Too Long", 431: "Request Header Fields Too Large"}
_MALFORMED = (
    InvalidRequestLine, InvalidRequestMethod, InvalidHTTPVersion, InvalidHeader, InvalidHeaderName,
    InvalidSchemeHeaders, ObsoleteFolding,
)  # fmt: skip


def client_error(exc: BaseException) -> tuple[int, str, str] | None:
    """(status, code, message) for a request gunicorn could not read; None for the rest."""
    if isinstance(exc, LimitRequestLine):
        return 414, "request_line_too_long", f"the request line is over the server's limit ({exc})"
    if isinstance(exc, LimitRequestHeaders):
        return 431, "headers_too_large", f"the request's headers are over the server's limits ({exc})"
    if isinstance(exc, _MALFORMED):
        return 400, "malformed", f"the request cannot be read: {exc}"
    return None


def error_bytes(status: int, code: str, message: str) -> bytes:
    """The whole answer: a closing HTTP/1.1 reply with the error document as its body."""
    # The gateway's one error shape (services/gateway/errors.py, error_document).
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        "X-Content-Type-Options: nosniff\r\n"
        "Cache-Control: no-store\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("latin-1") + body


class JsonErrorsGeventWorker(GeventWorker):
    """`worker_class` of deploy/gunicorn.conf.py."""

    def is_already_handled(self, respiter):
        """Hands an event stream's connection over to the app once its headers are sent.

        An app body with `hand_off` (services/gateway/table_stream.py) takes the socket
        and pushes its events from the process's fan-out, so the connection's greenlet,
        gunicorn's request, response and environ are not kept for the stream's minutes.
        The headers are the app's, sent as gunicorn sends any (chunked for HTTP/1.1, so a
        client sees the same framing as from a body gunicorn writes); the app gets its
        own descriptor (a dup) and whether to frame chunks, and gunicorn closes its own as
        for any connection that is done."""
        hand_off = getattr(respiter, "hand_off", None)
        resp = getattr(getattr(respiter, "start_response", None), "__self__", None)
        if hand_off is None or resp is None or not hasattr(resp, "send_headers"):
            return super().is_already_handled(respiter)
        resp.send_headers()
        hand_off(os.dup(resp.sock.fileno()), resp.chunked)
        raise StopIteration  # gunicorn's way to end a connection without a word more

    def handle_error(self, req, client, addr, exc):
        found = client_error(exc)
        if found is None:
            return super().handle_error(req, client, addr, exc)
        status, code, message = found
        self.log.warning("Invalid request from ip=%s: %s", (addr or ("", -1))[0], exc)
        try:
            write_nonblock(client, error_bytes(status, code, message))
        except Exception:
            self.log.debug("Failed to send error message.")
        return None
