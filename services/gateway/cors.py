"""Cross-origin calls from browsers, for the origins the operator lists (Flask-Cors).

`GATEWAY_CORS_ORIGINS` names them (none by default: the gateway's own pages are
same-origin). Only `/api/...` answers cross-origin; the pages, /metrics and /ops never do.
A listed origin's preflight (`OPTIONS` with `Access-Control-Request-Method`) gets the
methods and the request headers the API reads (the two tokens, Idempotency-Key,
Last-Event-ID), and its replies expose the headers a client needs (Location, Retry-After,
RateLimit-*, Idempotent-Replayed). An origin not listed gets no `Access-Control-Allow-*`
header at all, so the browser keeps the reply from its page.

Credentials: never. Every credential of the API is a header the client sets itself
(`Authorization` or `X-Seat-Token`, `X-Player-Token`); the API sets no cookie a browser
would send by itself, so `Access-Control-Allow-Credentials` is never sent and a cross-site
page can only act with tokens it was given. A browser `EventSource` (which cannot set
headers) follows a seat with a single-use stream ticket (`?ticket=`), not a token in the URL.
"""

from __future__ import annotations

from flask import Flask, Response, request
from flask_cors import CORS

ALLOWED_HEADERS = [
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "Last-Event-ID",
    "X-Player-Token",
    "X-Seat-Token",
]
EXPOSED_HEADERS = [
    "Location",
    "Retry-After",
    "RateLimit-Limit",
    "RateLimit-Remaining",
    "RateLimit-Reset",
    "RateLimit-Policy",
    "Idempotent-Replayed",
]
PREFLIGHT_MAX_AGE = 600


def install(app: Flask, origins: tuple[str, ...]) -> None:
    """CORS on /api for `origins` (exact matches); nothing at all when there are none."""
    if not origins:
        return
    CORS(
        app,
        resources={r"/api/*": {"origins": list(origins)}},
        methods=["GET", "POST", "PATCH", "DELETE", "OPTIONS"],
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        supports_credentials=False,
        max_age=PREFLIGHT_MAX_AGE,
        vary_header=True,
    )

    @app.after_request
    def _vary(response: Response) -> Response:
        # Flask-Cors says Vary: Origin only for several origins; with one, an answer with
        # the Allow-Origin header and one without still differ by Origin, so a shared
        # cache must keep them apart.
        if request.path.startswith("/api/"):
            response.vary.add("Origin")
        return response
