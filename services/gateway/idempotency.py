"""`Idempotency-Key` on every write under /api: a retry gets the first answer, byte for byte.

A client that sends a write (a move, a join, a new table, a ticket, a sweep...) with an
`Idempotency-Key` header and loses the answer (a timeout, a dropped connection) sends the
same request again with the same key: within `idempotency_seconds` it gets the first
answer again (status, body bytes, Location; marked `Idempotent-Replayed: true`) and nothing
happens a second time. The same key with a different body is 422
`idempotency_key_reused`; a retry while the first attempt still runs is 409
`idempotency_in_progress` with Retry-After. Records live in Redis
(services/platform/idempotency.py), so a retry may reach any gateway process.

Runs after the rate limits (a retry is a write like any other) and before the view. Which
answers are kept: every one below 500 except 429 (a refused write did nothing, and may be
sent again later). A 5xx is not kept: the request wrote nothing (errors.py), so the
retry runs afresh.
"""

from __future__ import annotations

import hashlib

from flask import Flask, Response, g, request

from services.gateway.context import current
from services.platform.errors import PlatformError
from services.platform.idempotency import IdempotencyStore, Kept, digest, fingerprint

HEADER = "Idempotency-Key"
REPLAYED = "Idempotent-Replayed"
KEY_MIN, KEY_MAX = 8, 255
KEPT_HEADERS = ("Content-Type", "Location")
MAX_KEPT_BODY = 1 << 20
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def _scope() -> str:
    """Who is writing: their credentials as sent (hashed), else their address."""
    creds = "\x00".join(
        request.headers.get(h, "") for h in ("Authorization", "X-Seat-Token", "X-Player-Token")
    )
    if creds.strip("\x00"):
        return "creds:" + hashlib.sha256(creds.encode()).hexdigest()
    return "addr:" + (request.remote_addr or "")


def _check(key: str) -> None:
    """The document's pattern, `^[\\x21-\\x7e]+$`: visible ASCII, so no space either."""
    if not KEY_MIN <= len(key) <= KEY_MAX or not all("\x21" <= c <= "\x7e" for c in key):
        raise PlatformError(
            400,
            "malformed",
            f"'{HEADER}' is {KEY_MIN} to {KEY_MAX} visible ASCII characters, no spaces (a UUID is a good one)",
            field=HEADER,
        )


def install(app: Flask) -> None:
    def store() -> IdempotencyStore:
        return current().idempotency

    @app.before_request
    def _replay_or_begin() -> Response | None:
        key = request.headers.get(HEADER)
        if key is None or request.method not in WRITES or not request.path.startswith("/api/"):
            return None
        _check(key)
        record = digest(_scope(), request.method, request.path, key)
        body_fp = fingerprint(request.get_data(cache=True))
        begun = store().begin(record, body_fp)
        if begun.outcome == "mismatch":
            raise PlatformError(
                422, "idempotency_key_reused", f"that {HEADER} was used for a different request body"
            )
        if begun.outcome == "running":
            raise PlatformError(
                409,
                "idempotency_in_progress",
                f"a request with that {HEADER} is still running; retry shortly",
                retry_after=1,
            )
        if begun.outcome == "kept":
            assert begun.kept is not None
            reply = Response(begun.kept.body, status=begun.kept.status)
            for name, value in begun.kept.headers:
                reply.headers[name] = value
            reply.headers[REPLAYED] = "true"
            return reply
        g.idempotency = (record, body_fp)
        return None

    @app.after_request
    def _keep(response: Response) -> Response:
        begun = g.pop("idempotency", None)
        if begun is None:
            return response
        record, body_fp = begun
        status = response.status_code
        if status >= 500 or status == 429 or response.is_streamed:
            store().drop(record)
            return response
        body = response.get_data()
        if len(body) > MAX_KEPT_BODY:
            store().drop(record)
            return response
        headers = [(h, response.headers[h]) for h in KEPT_HEADERS if h in response.headers]
        store().keep(record, body_fp, Kept(status, headers, body))
        return response
