"""Players and sessions: a guest from a device id, upgrading to a username, signing in
and out, and the display name (players.py says why it is shaped so)."""

from __future__ import annotations

from flask import Blueprint, jsonify

from .auth import current_player, session_token
from .context import current
from .errors import json_object
from .openapi import errors, json_content, ok

bp = Blueprint("players", __name__, url_prefix="/api")


@bp.post("/players/guest")
def guest():
    body = json_object()
    return jsonify(current().players.guest(body.get("device"), body.get("name"))), 201


@bp.get("/players/me")
def me():
    player = current_player(required=True)
    assert player is not None
    return jsonify(player.public())


@bp.patch("/players/me")
def rename():
    player = current_player(required=True)
    assert player is not None
    return jsonify(current().players.rename(player, json_object().get("name")).public())


@bp.post("/players/me/upgrade")
def upgrade():
    player = current_player(required=True)
    assert player is not None
    body = json_object()
    return jsonify(current().players.upgrade(player, body.get("username"), body.get("password")).public())


@bp.post("/sessions")
def login():
    body = json_object()
    return jsonify(current().players.login(body.get("username"), body.get("password"))), 201


@bp.delete("/sessions/current")
def logout():
    current_player(required=True)
    current().players.revoke(session_token() or "")
    return jsonify({"revoked": 1})


@bp.delete("/sessions")
def logout_everywhere():
    player = current_player(required=True)
    assert player is not None
    return jsonify({"revoked": current().players.revoke_all(player)})


SESSION_REQUIRED: list[dict[str, list[str]]] = [{"PlayerSession": []}]

OPENAPI_SCHEMAS = {
    "Player": {
        "type": "object",
        "required": ["player", "name", "kind"],
        "properties": {
            "player": {"type": "string", "description": "the player's id: what ratings and seats hold"},
            "name": {"type": "string", "description": "display name, free to change, not unique"},
            "kind": {"type": "string", "enum": ["guest", "account"]},
            "username": {"type": "string", "nullable": True},
        },
    },
    "Session": {
        "type": "object",
        "required": ["player", "name", "kind", "token", "expires"],
        "properties": {
            "player": {"type": "string"},
            "name": {"type": "string"},
            "kind": {"type": "string", "enum": ["guest", "account"]},
            "username": {"type": "string", "nullable": True},
            "token": {"type": "string", "description": "send as X-Player-Token; shown once"},
            "expires": {"type": "number", "description": "unix seconds"},
        },
    },
}

_NAME = {"type": "string", "minLength": 1, "maxLength": 32}

OPENAPI_PATHS = {
    "/api/players/guest": {
        "post": {
            "operationId": "signInGuest",
            "summary": "The device's guest player (made on first sight) and a new session",
            "requestBody": {
                "required": True,
                "content": json_content(
                    {
                        "type": "object",
                        "required": ["device"],
                        "properties": {
                            "device": {"type": "string", "minLength": 16, "maxLength": 128},
                            "name": {**_NAME, "nullable": True},
                        },
                    }
                ),
            },
            "responses": {**ok("signed in", "Session", "201"), **errors(400, 409, 413)},
        }
    },
    "/api/players/me": {
        "get": {
            "summary": "The signed-in player",
            "security": SESSION_REQUIRED,
            "responses": {**ok("the player", "Player"), **errors(401)},
        },
        "patch": {
            "summary": "Change the display name",
            "security": SESSION_REQUIRED,
            "requestBody": {
                "required": True,
                "content": json_content({"type": "object", "properties": {"name": _NAME}}),
            },
            "responses": {**ok("the player", "Player"), **errors(400, 401, 413)},
        },
    },
    "/api/players/me/upgrade": {
        "post": {
            "summary": "A guest takes a username and password (its id and ratings stay)",
            "security": SESSION_REQUIRED,
            "requestBody": {
                "required": True,
                "content": json_content(
                    {
                        "type": "object",
                        "required": ["username", "password"],
                        "properties": {
                            "username": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{3,32}$"},
                            "password": {"type": "string", "minLength": 8, "maxLength": 128},
                        },
                    }
                ),
            },
            "responses": {**ok("the player", "Player"), **errors(400, 401, 409, 413)},
        }
    },
    "/api/sessions": {
        "post": {
            "summary": "Sign in with a username and password",
            "requestBody": {
                "required": True,
                "content": json_content(
                    {
                        "type": "object",
                        "required": ["username", "password"],
                        "properties": {
                            "username": {"type": "string", "maxLength": 32},
                            "password": {"type": "string", "maxLength": 128},
                        },
                    }
                ),
            },
            "responses": {**ok("signed in", "Session", "201"), **errors(400, 401, 413)},
        },
        "delete": {
            "summary": "End every session of the signed-in player",
            "security": SESSION_REQUIRED,
            "responses": {
                "200": {
                    "description": "how many sessions ended",
                    "content": json_content(
                        {"type": "object", "properties": {"revoked": {"type": "integer"}}}
                    ),
                },
                **errors(401),
            },
        },
    },
    "/api/sessions/current": {
        "delete": {
            "summary": "End this session",
            "security": SESSION_REQUIRED,
            "responses": {
                "200": {
                    "description": "ended",
                    "content": json_content(
                        {"type": "object", "properties": {"revoked": {"type": "integer"}}}
                    ),
                },
                **errors(401),
            },
        }
    },
}
