"""Operations: liveness for balancers, Prometheus metrics, and the OpenAPI document."""

from __future__ import annotations

import hmac

import redis
from flask import Blueprint, Response, current_app, jsonify

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
    """Operators, or the scraper with `Authorization: Bearer <GATEWAY_METRICS_TOKEN>`
    (`Settings.metrics_token`): the counters say how the platform is used and loaded."""
    token = current().settings.metrics_token
    presented = bearer_token()
    if not (token and presented and hmac.compare_digest(token, presented)):
        require_role("operator")
    return Response(exposition(current().store), mimetype="text/plain; version=0.0.4")


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
