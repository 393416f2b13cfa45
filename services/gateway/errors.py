"""One error shape for every failure: `{"error": {"code": ..., "message": ...}}`.

Handlers turn Flask's own errors (404 route, 405, 413 body too large) into the same shape,
so a client parses one thing. An outage is a 503 with `Retry-After`, never a 500: an
engine that cannot answer is `engine_unavailable` (see engines.py), Redis unreachable
or still loading its data after a restart is `store_unavailable`. Nothing here changes state: a request either passes every
check and reaches the one atomic write, or ends here with nothing written.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from flask import Flask, jsonify, request
from redis.exceptions import RedisClusterException
from werkzeug.exceptions import HTTPException

from services.platform.errors import RETRY_AFTER_SECONDS, PlatformError

log = logging.getLogger("cultists.gateway")


def error_document(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one shape of every error the gateway answers, also where Flask is not running
    yet (the rate limits' penalty box, guards.py)."""
    return {"error": {"code": code, "message": message, **extra}}


def error_response(status: int, code: str, message: str, **extra: Any):
    body = jsonify(error_document(code, message, **extra))
    body.status_code = status
    if "retry_after" in extra:
        body.headers["Retry-After"] = str(int(extra["retry_after"]))
    if status == 401:
        body.headers["WWW-Authenticate"] = 'Bearer realm="seat"'
    if status == 503 and "retry_after" not in extra:  # an outage; `busy` says its own wait
        body.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return body


def register(app: Flask) -> None:
    @app.errorhandler(PlatformError)
    def _api_error(exc: PlatformError):
        return error_response(exc.status, exc.code, exc.message, **exc.extra)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        code = (exc.name or "error").lower().replace(" ", "_")
        response = error_response(exc.code or 500, code, exc.description or exc.name)
        allow = dict(exc.get_headers()).get("Allow")
        if allow:  # a 405 says which methods the path takes (RFC 9110), TRACE's included
            response.headers["Allow"] = allow
        return response

    @app.errorhandler(redis.ConnectionError)
    @app.errorhandler(redis.TimeoutError)
    @app.errorhandler(redis.exceptions.ClusterError)  # a cluster's slot is moving or down
    @app.errorhandler(RedisClusterException)  # no node of the cluster answers
    def _store_down(exc: Exception):
        # Every write is one script or transaction, so a request cut off here wrote
        # nothing; redis-py reconnects on the next request once Redis is back.
        log.warning("redis unavailable in %s %s: %s", request.method, request.path, exc)
        return error_response(503, "store_unavailable", "the table store is unavailable; retry shortly")

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unhandled error in %s %s", request.method, request.path)
        return error_response(500, "internal_error", "the gateway failed; the request changed nothing")


def bearer_token() -> str | None:
    """The seat (or ticket) token, from `Authorization: Bearer` or `X-Seat-Token`."""
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip() or None
    return request.headers.get("X-Seat-Token") or None
