"""`RateLimit-*` headers (the IETF httpapi draft's names) on every limited request.

Two limits speak through them: a move's per-seat, per-decision tries (matches_api.act,
services/platform/move_limits.py), and the write limits every other write counts against
(guards.py, Flask-Limiter). Each answer carries `RateLimit-Limit` (requests in the
window), `RateLimit-Remaining` (after this one), `RateLimit-Reset` (seconds until the
window resets) and `RateLimit-Policy` (`<limit>;w=<window>;comment="<which>"`); a 429 also
carries `Retry-After`. A move's numbers come from its own count (no extra round trip); a
write's from Flask-Limiter's window, read once per write (writes other than moves are few:
joins, tables, tickets, sweeps).
"""

from __future__ import annotations

import time

import redis
from flask import Flask, Response, g
from flask_limiter import Limiter

NOTE = "rate_limit"


def note(limit: int, remaining: int, reset_seconds: int, comment: str, window: int | None = None) -> None:
    """What this request's answer says about its limit (set by whoever counted it)."""
    setattr(g, NOTE, (limit, remaining, reset_seconds, comment, window or reset_seconds))


def headers(limit: int, remaining: int, reset_seconds: int, comment: str, window: int) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(limit),
        "RateLimit-Remaining": str(max(0, remaining)),
        "RateLimit-Reset": str(max(0, reset_seconds)),
        "RateLimit-Policy": f'{limit};w={window};comment="{comment}"',
    }


def install(app: Flask, limiter: Limiter | None, is_limited_write) -> None:
    @app.after_request
    def _send(response: Response) -> Response:
        noted = g.pop(NOTE, None)
        if noted is None and limiter is not None and is_limited_write():
            noted = _write_limit(limiter)
        if noted is not None:
            response.headers.update(headers(*noted))
        return response


def _write_limit(limiter: Limiter) -> tuple[int, int, int, str, int] | None:
    """The write limit this request counted against (its smallest window), or None."""
    try:
        current = limiter.current_limit
        if current is None:
            return None
        item = current.limit
        reset = max(0, int(current.reset_at - time.time()))
        return item.amount, current.remaining, reset, "writes", item.get_expiry()
    except redis.RedisError:  # Redis down: the answer goes out without the headers
        return None
