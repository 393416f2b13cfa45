"""The API's own bounds on a request's head: its request line and its header fields.

A request line over `MAX_REQUEST_LINE` bytes is a 414 `request_line_too_long`; a header
field over `MAX_HEADER_FIELD` bytes, or more than `MAX_HEADER_FIELDS` of them, a 431
`headers_too_large`: both in the API's one error shape, before any route runs.

Two layers say the same thing. Gunicorn's own limits sit above these
(deploy/gunicorn.conf.py: twice as large), so a head within them reaches this check and
gets a JSON answer from the app, with the security headers every answer carries; a head
past even gunicorn's limits never reaches the app, and the gateway's gunicorn worker
(services/runtime/gunicorn_worker.py) answers it in the same shape instead of gunicorn's
HTML 400. Either way a client parses one thing, and the document (openapi.py) lists both
codes on every operation.
"""

from __future__ import annotations

import os

from flask import Flask, request

from services.platform.errors import PlatformError

# Gunicorn's own defaults, which clients and proxies are used to; the server's limits are
# set above them so that these, not the server's, are met first.
MAX_REQUEST_LINE = int(os.environ.get("GATEWAY_MAX_REQUEST_LINE", "4094"))
MAX_HEADER_FIELD = int(os.environ.get("GATEWAY_MAX_HEADER_FIELD", "8190"))
MAX_HEADER_FIELDS = int(os.environ.get("GATEWAY_MAX_HEADER_FIELDS", "100"))


def request_line_length(environ: dict) -> int:
    """`METHOD SP target SP version` as it came in: gunicorn passes the target as sent
    (RAW_URI); another server, as its path and query."""
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if not target:
        query = environ.get("QUERY_STRING", "")
        target = environ.get("PATH_INFO", "") + (f"?{query}" if query else "")
    return len(environ.get("REQUEST_METHOD", "")) + len(target) + len(environ.get("SERVER_PROTOCOL", "")) + 2


def _header_fields(environ: dict) -> list[tuple[str, str]]:
    """The header fields as `name: value` pairs (the CGI names back in their wire form)."""
    out = []
    for name, value in environ.items():
        if name.startswith("HTTP_"):
            out.append((name[5:].replace("_", "-"), str(value)))
        elif name in ("CONTENT_TYPE", "CONTENT_LENGTH") and value:
            out.append((name.replace("_", "-"), str(value)))
    return out


def check(environ: dict) -> None:
    """Raise the API's 414 or 431 for a head past its bounds."""
    length = request_line_length(environ)
    if length > MAX_REQUEST_LINE:
        raise PlatformError(
            414,
            "request_line_too_long",
            f"the request line is {length} bytes; the API takes at most {MAX_REQUEST_LINE} "
            "(send long data in a body)",
        )
    fields = _header_fields(environ)
    if len(fields) > MAX_HEADER_FIELDS:
        raise PlatformError(
            431,
            "headers_too_large",
            f"{len(fields)} header fields; the API takes at most {MAX_HEADER_FIELDS}",
        )
    for name, value in fields:
        if len(name) + 2 + len(value) > MAX_HEADER_FIELD:
            raise PlatformError(
                431,
                "headers_too_large",
                f"header {name} is {len(name) + 2 + len(value)} bytes; the API takes at most "
                f"{MAX_HEADER_FIELD} per field",
            )


def register(app: Flask) -> None:
    """The check, first of the app's request hooks (before the rate limits count it)."""
    app.before_request_funcs.setdefault(None, []).insert(0, lambda: check(request.environ))
