"""Operations: liveness for balancers, Prometheus metrics, and the OpenAPI document."""

from __future__ import annotations

import hmac

import redis
from flask import Blueprint, Response, current_app, jsonify, request

from services.gateway.context import current

from .auth import require_role
from .errors import bearer_token
from .metrics import exposition
from .openapi import json_content

bp = Blueprint("ops", __name__)


@bp.get("/healthz")
def healthz():
    """Ready when Redis answers: without it the gateway can serve nothing."""
    try:
        current().redis.ping()
    except redis.RedisError as exc:
        return jsonify({"status": "unavailable", "redis": str(exc)}), 503
    return jsonify({"status": "ok"})


@bp.get("/metrics")
def metrics():
    """Operators; the scraper with `Authorization: Bearer <GATEWAY_METRICS_TOKEN>`
    (`Settings.metrics_token`, `cultists run`'s Prometheus); or any request that arrived on
    the internal `metrics_port` (docker-compose's and k8s's Prometheus). The counters say
    how the platform is used and loaded: nobody else's business."""
    settings = current().settings
    token = settings.metrics_token
    presented = bearer_token()
    if token and presented and hmac.compare_digest(token, presented):
        pass
    elif settings.metrics_port is None or _arrival_port() != settings.metrics_port:
        require_role("operator")
    return Response(exposition(current().store), mimetype="text/plain; version=0.0.4")


def _arrival_port() -> int | None:
    """The local port the request's connection came in on: gunicorn's socket (never a
    header, which a client writes), else None."""
    sock = request.environ.get("gunicorn.socket")
    try:
        return int(sock.getsockname()[1]) if sock is not None else None
    except (OSError, IndexError, TypeError, ValueError):
        return None


@bp.get("/api/openapi.json")
def openapi():
    return jsonify(current_app.extensions["cultists.openapi"])


OPENAPI_PATHS = {
    "/api/openapi.json": {
        "get": {
            "summary": "This document",
            "responses": {"200": {"description": "OpenAPI 3", "content": json_content({"type": "object"})}},
        }
    },
}
