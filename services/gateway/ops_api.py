"""Operations: liveness for balancers, Prometheus metrics, and the OpenAPI document."""

from __future__ import annotations

import redis
from flask import Blueprint, Response, current_app, jsonify

from services.gateway.context import current

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
