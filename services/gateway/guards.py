"""Guards every request passes before a view runs: the body's size, and write rate limits.

Body size: Flask refuses a body whose Content-Length is over `max_content_length` (413),
but a chunked body has no Content-Length, and Werkzeug then silently cuts the stream at
the limit, so a 10 MB chunked body reached the views as truncated JSON and got 400. Here a
chunked body is read up to one byte past the limit first: over it is 413, under it is
handed on as an ordinary body of known length.

Rate limits (Flask-Limiter, counted in Redis so every gateway process shares the counts):
every write (POST, PUT, PATCH, DELETE) under /api counts against its writer: the signed-in
player when a live session is presented (`rate_limit_player`, one count whichever session
or address they write from), else the client's address (`rate_limit_address`). Behind a
proxy every request comes from the proxy's address, so the address is the one ProxyFix
takes from X-Forwarded-For when `trusted_proxies` says how many proxies to believe (see
create_app); by default (0) the header is ignored, as a client could write anything in it.
Past the limit the answer is 429 with `Retry-After`. Reads are not limited here: they cost
one Redis read, and the costly ones (replay rebuilds) have their own bounded pool
(offload.py).
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


def _signed_in_player() -> str | None:
    """The id of the player whose live session the request presents, else None (no
    session, or one expired: that request counts by address, and then fails with 401)."""
    if not request.headers.get(PLAYER_HEADER):
        return None
    from .auth import player_id
    from .errors import ApiError

    try:
        return player_id()
    except ApiError:
        return None


def _player_key() -> str:
    """The player id: one player's sessions share one count (a player could otherwise
    open a session per burst, or write from many addresses)."""
    return f"player:{_signed_in_player()}"


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
                # A signed-in player counts as themself, where there is such a limit.
                exempt_when=lambda: (
                    not _is_write() or (bool(settings.rate_limit_player) and _signed_in_player() is not None)
                ),
                scope="address",
                on_breach=_breach,
            )(bp)
        if settings.rate_limit_player:
            limiter.limit(
                settings.rate_limit_player,
                key_func=_player_key,
                exempt_when=lambda: not _is_write() or _signed_in_player() is None,
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
