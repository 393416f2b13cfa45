"""Guards every request passes before a view runs: the body's size, and write rate limits.

Body size: Flask refuses a body whose Content-Length is over `max_content_length` (413),
but a chunked body has no Content-Length, and Werkzeug then silently cuts the stream at
the limit, so a 10 MB chunked body reached the views as truncated JSON and got 400. Here a
chunked body is read up to one byte past the limit first: over it is 413, under it is
handed on as an ordinary body of known length.

Rate limits (Flask-Limiter, counted in Redis so every gateway process shares the counts):
every write (POST, PUT, PATCH, DELETE) under /api counts against the client's address and,
when a player session is presented, against that player too; past either limit the
answer is 429 with `Retry-After`. Reads are not limited here: they cost one Redis read,
and the costly ones (replay rebuilds) have their own bounded pool (offload.py).
"""

from __future__ import annotations

import io
import time

from flask import Flask, request
from flask_limiter import Limiter, RateLimitExceeded, RequestLimit
from flask_limiter.util import get_remote_address
from werkzeug.exceptions import RequestEntityTooLarge

from .errors import error_response
from .settings import Settings

WRITES = ("POST", "PUT", "PATCH", "DELETE")
PLAYER_HEADER = "X-Player-Token"


def _is_write() -> bool:
    return request.method in WRITES and request.path.startswith("/api/")


def _player_key() -> str:
    """The session's player id: one player's sessions share one count (a player could
    otherwise open a session per burst). An unknown session counts by its hash; the
    request then fails with 401 anyway."""
    from .auth import current_player
    from .errors import ApiError
    from .store import hash_token

    try:
        player = current_player()
    except ApiError:
        player = None
    if player is not None:
        return f"player:{player.id}"
    return f"session:{hash_token(request.headers.get(PLAYER_HEADER, ''))}"


def install(app: Flask, settings: Settings) -> Limiter | None:
    """Body-size guard always; rate limits unless both limits are empty (the bench's
    scripted clients share one address)."""
    limit = settings.max_content_length

    @app.before_request
    def _chunked_body() -> None:
        environ = request.environ
        if request.content_length is not None or "chunked" not in environ.get("HTTP_TRANSFER_ENCODING", ""):
            return
        if not environ.get("wsgi.input_terminated"):
            return  # Werkzeug reads such a stream as empty: nothing unbounded gets in
        data = environ["wsgi.input"].read(limit + 1)
        if len(data) > limit:
            raise RequestEntityTooLarge()
        environ["wsgi.input"] = io.BytesIO(data)
        environ["CONTENT_LENGTH"] = str(len(data))
        del environ["wsgi.input_terminated"]
        del environ["HTTP_TRANSFER_ENCODING"]  # Werkzeug ignores the length of a chunked body

    if not settings.rate_limit_address and not settings.rate_limit_player:
        return None
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=settings.redis_url,
        key_prefix="gw:limit",
        strategy="fixed-window",
        headers_enabled=True,
        on_breach=_breach,
        # Redis down: the request goes on and fails (or not) on its own merits, with the
        # gateway's own 503 mapping, rather than as a limiter error.
        swallow_errors=True,
    )

    @app.errorhandler(RateLimitExceeded)
    def _limited(exc: RateLimitExceeded):
        return (
            exc.response if exc.response is not None else error_response(429, "rate_limited", exc.description)
        )

    for bp_name, bp in app.blueprints.items():
        if bp_name == "pages":
            continue
        if settings.rate_limit_address:
            limiter.limit(
                settings.rate_limit_address,
                exempt_when=lambda: not _is_write(),
                scope="address",
                on_breach=_breach,
            )(bp)
        if settings.rate_limit_player:
            limiter.limit(
                settings.rate_limit_player,
                key_func=_player_key,
                exempt_when=lambda: not _is_write() or not request.headers.get(PLAYER_HEADER),
                scope="player",
                on_breach=_breach,
            )(bp)
    return limiter


def _breach(limit: RequestLimit):
    """429 in the gateway's one error shape, with how long to wait."""
    retry = max(1, int(limit.reset_at - time.time()))
    return error_response(
        429,
        "rate_limited",
        f"too many writes: at most {limit.limit}; try again in {retry} s",
        retry_after=retry,
    )
