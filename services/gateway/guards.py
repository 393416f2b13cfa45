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
Past the limit the answer is 429 with `Retry-After`; a writer already refused is then
refused by its worker alone until the window resets (`PenaltyBox`: no Redis round trip, no
Flask request, the body unread, and the answer held back `rate_limit_tarpit_seconds`), so a
flood costs little. Reads are not limited here: they cost
one Redis read, and the costly ones (replay rebuilds) have their own bounded pool
(offload.py).
"""

from __future__ import annotations

import io
import math
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

import orjson
import redis
from flask import Blueprint, Flask, Response, request
from flask_limiter import Limiter, RateLimitExceeded, RequestLimit
from flask_limiter.util import get_remote_address
from werkzeug.exceptions import RequestEntityTooLarge

from services.platform.settings import Settings

from . import rate_limit_headers
from .errors import error_document, error_response
from .metrics import WRITES_REFUSED

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]

WRITES = ("POST", "PUT", "PATCH", "DELETE")
PLAYER_HEADER = "X-Player-Token"
MOVE_ENDPOINT = "matches.act"
MOVE_PATH = re.compile(r"^/api/tables/[^/]+/actions$")  # what the box sees of a move (no routing yet)


def _is_write() -> bool:
    """A write the write limits count: under /api, and not a move (a move is limited per
    seat and per decision instead, matches_api.act)."""
    return request.method in WRITES and request.path.startswith("/api/") and request.endpoint != MOVE_ENDPOINT


def _signed_in_player() -> str | None:
    """The id of the player whose live session the request presents, else None (no
    session, or one expired: that request counts by address, and then fails with 401)."""
    if not request.headers.get(PLAYER_HEADER):
        return None
    from services.platform.errors import PlatformError

    from .auth import player_id

    try:
        return player_id()
    except PlatformError:
        return None


def _player_key() -> str:
    """The player id: one player's sessions share one count (a player could otherwise
    open a session per burst, or write from many addresses)."""
    return f"player:{_signed_in_player()}"


def install(app: Flask, settings: Settings) -> Limiter | None:
    """Rate limits unless both limits are empty (the bench's scripted clients share one
    address), then the body-size guard: a write over its limit is refused before its body
    is read. Called before `create_app` wraps the app in ProxyFix, so the penalty box sees
    the address the limiter counts."""
    limiter = _rate_limits(app, settings)
    rate_limit_headers.install(app, limiter, _is_write)  # moves' own limit speaks without them too
    _body_size(app, settings.max_content_length)
    return limiter


def _body_size(app: Flask, limit: int) -> None:
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


def _limits_storage(settings: Settings) -> str:
    """The limits' counters live in the platform's Redis: on a cluster, through the
    `limits` library's own cluster storage (each counter is one key, so any slot does)."""
    if settings.redis_cluster:
        return "redis+cluster://" + settings.redis_url.split("://", 1)[1].split("/", 1)[0]
    return settings.redis_url


def _rate_limits(app: Flask, settings: Settings) -> Limiter | None:
    if not settings.rate_limit_address and not settings.rate_limit_player and not settings.rate_limit_guest:
        return None
    box = PenaltyBox(settings.rate_limit_tarpit_seconds)
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=_limits_storage(settings),
        key_prefix="gw:limit",
        strategy="fixed-window",
        # No X-RateLimit-* headers: each costs the window's count and expiry from Redis
        # (two more round trips) on every write, refused or not; a 429 says Retry-After.
        headers_enabled=False,
        # Redis down: the request goes on and fails (or not) on its own merits, with the
        # gateway's own 503 mapping, rather than as a limiter error.
        swallow_errors=True,
    )

    @app.errorhandler(RateLimitExceeded)
    def _limited(exc: RateLimitExceeded):
        return (
            exc.response if exc.response is not None else error_response(429, "rate_limited", exc.description)
        )

    by_player = bool(settings.rate_limit_player)

    def breach(scope: str) -> Callable[[RequestLimit], Response]:
        def on_breach(limit: RequestLimit) -> Response:
            reset_at = _window_end(limiter, limit)
            if reset_at is not None and scope != "guest":  # a guest refusal holds no other write
                box.hold(box.key(request.environ, scope == "player"), reset_at, str(limit.limit))
            WRITES_REFUSED.labels(scope, "redis").inc()
            message, retry = _refusal(str(limit.limit), reset_at or time.time())
            rate_limit_headers.note(limit.limit.amount, 0, retry, "writes", limit.limit.get_expiry())
            return error_response(429, "rate_limited", message, retry_after=retry)

        return on_breach

    for bp_name, bp in cast(dict[str, Blueprint], app.blueprints).items():  # (typed as sansio's)
        if bp_name == "pages":
            continue
        if settings.rate_limit_address:
            limiter.limit(
                settings.rate_limit_address,
                # Every write, a signed-in player's too (issue 27): many guests from one
                # address share that address's count, as well as each having their own.
                exempt_when=lambda: not _is_write(),
                scope="address",
                on_breach=breach("address"),
            )(bp)
        if settings.rate_limit_player:
            limiter.limit(
                settings.rate_limit_player,
                key_func=_player_key,
                exempt_when=lambda: not _is_write() or _signed_in_player() is None,
                scope="player",
                on_breach=breach("player"),
            )(bp)
    if settings.rate_limit_guest and "players.guest" in app.view_functions:
        # New guests per address: each is a player record, a device and a session in Redis.
        # flask-limiter types the decorated view with async returns too: the view is unchanged.
        app.view_functions["players.guest"] = limiter.limit(  # type: ignore[assignment]
            settings.rate_limit_guest, scope="guest", on_breach=breach("guest")
        )(app.view_functions["players.guest"])
    # Flask's middleware idiom; mypy compares it with the method's unbound signature.
    app.wsgi_app = box.guard(app.wsgi_app, by_player)  # type: ignore[method-assign, assignment]
    return limiter


def _window_end(limiter: Limiter, limit: RequestLimit) -> float | None:
    """When the breached window resets, to the millisecond: the count's expiry in Redis (a
    fixed window starts at its first write). Flask-Limiter's own `reset_at` is TTL's whole
    seconds plus one, up to two seconds late: a box held that long would refuse writes the
    shared count already allows. None if the count is gone (or Redis did not answer)."""
    storage = limiter.storage
    try:
        ms = storage.get_connection().pttl(storage.prefixed_key(limit.key))  # type: ignore[attr-defined]
    except redis.RedisError:
        return None
    return time.time() + ms / 1000 if ms > 0 else None


def _refusal(limit: str, reset_at: float) -> tuple[str, int]:
    """A 429's words and its Retry-After (whole seconds, at least 1)."""
    retry = max(1, math.ceil(reset_at - time.time()))
    return f"too many writes: at most {limit}; try again in {retry} s", retry


class PenaltyBox:
    """Writers already refused in this window, held by this worker until the window resets.

    Flask-Limiter asks Redis on every limited write; a refusal took five round trips (the
    increment, then the window's count and expiry, twice, for Retry-After) after Flask had
    built the request, so a flood from one address cost the gateway about what real writes
    cost. But once Redis has refused a writer, every later write of theirs in that fixed
    window is refused too (a fixed window's count only grows until it resets), so the
    worker can say so itself: before Flask, before the body is read, without Redis. The
    counts stay in Redis, shared by every worker: a box only remembers refusals its own
    worker was told, so each worker pays one Redis refusal per writer per window, and a
    writer under the limit is never refused by it.

    Keyed as the limits count: by address, and also by the player's session token when
    there is a player limit and the request presents one; a write is held if either is.
    The guest limit's refusals hold its address's guest sign-ins only, by Redis."""

    MAX_HELD = 10_000  # writers held at once; past it, expired ones go, then all (Redis decides again)

    def __init__(self, tarpit_seconds: float = 0.0) -> None:
        self._held: dict[str, tuple[float, str]] = {}
        # A held writer's write is answered this much later: a flood's connections wait, a
        # sleeping greenlet costs nothing, and a client that waits for Retry-After, as the
        # 429 asks, never meets it. Not cut short at the window's end: the connections would
        # all wake at that instant and spend the new window's writes in one burst; a write
        # whose window reset meanwhile is not refused, it goes on to be counted.
        self.tarpit_seconds = tarpit_seconds

    @staticmethod
    def key(environ: dict[str, Any], by_player: bool) -> str:
        """Where a write would be counted: its session, when it presents one and there is a
        player limit (an expired one is counted by address, but is not held: ordinary path)."""
        token = environ.get("HTTP_X_PLAYER_TOKEN") if by_player else None
        if token:
            return "session:" + token
        return "address:" + environ.get("REMOTE_ADDR", "")

    def hold(self, key: str, reset_at: float, limit: str) -> None:
        if len(self._held) >= self.MAX_HELD:
            now = time.time()
            self._held = {k: v for k, v in self._held.items() if v[0] > now}
            if len(self._held) >= self.MAX_HELD:
                self._held.clear()
        self._held[key] = (reset_at, limit)

    def held(self, key: str) -> tuple[float, str] | None:
        """(reset_at, the limit's words) while `key` is held, else None."""
        entry = self._held.get(key)
        if entry is not None and entry[0] <= time.time():
            self._held.pop(key, None)
            return None
        return entry

    def guard(self, wsgi_app: WSGIApp, by_player: bool) -> WSGIApp:
        """`wsgi_app` behind the box: a held writer's write is 429 at once."""

        def guarded(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if (
                environ.get("REQUEST_METHOD") in WRITES
                and path.startswith("/api/")
                and not MOVE_PATH.match(path)
            ):
                keys = [self.key(environ, False)]  # every write counts by address ...
                if by_player and environ.get("HTTP_X_PLAYER_TOKEN"):
                    keys.append(self.key(environ, True))  # ... and a player's by player too
                key, entry = next(((k, e) for k in keys if (e := self.held(k)) is not None), (keys[0], None))
                if entry is not None and self.tarpit_seconds > 0:
                    time.sleep(self.tarpit_seconds)
                    entry = self.held(key)  # the window may have reset meanwhile: then it counts
                if entry is not None:
                    message, retry = _refusal(entry[1], entry[0])
                    body = orjson.dumps(error_document("rate_limited", message, retry_after=retry))
                    WRITES_REFUSED.labels("player" if key.startswith("session:") else "address", "box").inc()
                    start_response(
                        "429 TOO MANY REQUESTS",
                        [
                            ("Content-Type", "application/json"),
                            ("Content-Length", str(len(body))),
                            ("Retry-After", str(retry)),
                        ],
                    )
                    return [body]
            return wsgi_app(environ, start_response)

        return guarded
