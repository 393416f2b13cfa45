"""Players and sessions: a guest from a device id, upgrading to a username, signing in
and out, and the display name (players.py says why it is shaped so)."""

from __future__ import annotations

from typing import Annotated, Literal

from flask import Blueprint, jsonify
from pydantic import Field

from services.gateway.context import current
from services.platform.players import (
    DEVICE_MAX,
    DEVICE_MIN,
    NAME_MAX,
    NAME_PATTERN,
    PASSWORD_MAX,
    PASSWORD_MIN,
    USERNAME,
)

from .auth import current_player, session_token
from .openapi import errors, json_body, ok
from .schemas import Body, openapi_components, parse_body
from .versions import created

bp = Blueprint("players", __name__, url_prefix="/api")


@bp.post("/players/guest")
def guest():
    body = parse_body(GuestSignIn)
    return created(current().players.guest(body.device, body.name), "/api/players/me")


@bp.get("/players/me")
def me():
    player = current_player(required=True)
    assert player is not None
    return jsonify(player.public())


@bp.patch("/players/me")
def rename():
    player = current_player(required=True)
    assert player is not None
    return jsonify(current().players.rename(player, parse_body(Rename).name).public())


@bp.post("/players/me/upgrade")
def upgrade():
    player = current_player(required=True)
    assert player is not None
    body = parse_body(Upgrade)
    return jsonify(current().players.upgrade(player, body.username, body.password))


@bp.post("/players/me/password")
def change_password():
    """An account's own session: a new password, every old session ended, a new one given."""
    player = current_player(required=True)
    assert player is not None
    body = parse_body(PasswordChange)
    return jsonify(current().players.change_password(player, body.password, body.new_password))


@bp.post("/sessions")
def login():
    body = parse_body(Login)
    return created(current().players.login(body.username, body.password), "/api/sessions/current")


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

# A display name: the platform's own rule (players.NAME_PATTERN), so the document's
# pattern is exactly what the API takes.
PlayerName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=NAME_MAX,
        pattern=NAME_PATTERN,
    ),
]
NAME_RULE = (
    f"1 to {NAME_MAX} characters, trimmed of the white space around them; none a control, "
    "format or separator character, but spaces between the others"
)


class GuestSignIn(Body):
    """A device's guest player: the same one for the same device id, made on first sight."""

    device: str = Field(
        min_length=DEVICE_MIN, max_length=DEVICE_MAX, description="a random id the device keeps; a secret"
    )
    name: PlayerName | None = Field(None, description=f"display name for a new guest: {NAME_RULE}")


class Rename(Body):
    name: PlayerName | None = Field(None, description=f"the new display name (null: unchanged): {NAME_RULE}")


class Upgrade(Body):
    """A guest takes a username and password; its id and ratings stay."""

    username: str = Field(pattern=USERNAME.pattern, description="3 to 32 letters, digits, '_', '.' or '-'")
    password: str = Field(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)


class PasswordChange(Body):
    """The current password, and the new one (the same policy as an upgrade's)."""

    password: str = Field(max_length=PASSWORD_MAX, description="the current password")
    new_password: str = Field(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)


class Login(Body):
    username: str = Field(max_length=32)
    password: str = Field(max_length=PASSWORD_MAX)


class Player(Body):
    player: str = Field(description="the player's id: what ratings and seats hold")
    name: str = Field(description="display name, free to change, not unique")
    kind: Literal["guest", "account"]
    username: str | None
    roles: list[Literal["operator", "designer", "player"]] = Field(
        description="what the player may do: every player is `player`; operators grant "
        "`designer` and `operator` (`cultists admin grant`)"
    )


class Session(Player):
    token: str = Field(description="send as X-Player-Token; shown once")
    expires: float = Field(description="unix seconds")


class Revoked(Body):
    revoked: int = Field(description="how many sessions ended")


OPENAPI_SCHEMAS = openapi_components(
    GuestSignIn, Rename, Upgrade, PasswordChange, Login, Player, Session, Revoked
)

OPENAPI_PATHS = {
    "/api/players/guest": {
        "post": {
            "operationId": "signInGuest",
            "summary": "The device's guest player (made on first sight) and a new session",
            "requestBody": json_body(
                "GuestSignIn", {"device": "3f1c7a52-8d8e-4a52-9a1e-5b7f0c2d9e11", "name": "Ada"}
            ),
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
            "requestBody": json_body("Rename", {"name": "Ada L."}),
            "responses": {**ok("the player", "Player"), **errors(400, 401, 413)},
        },
    },
    "/api/players/me/upgrade": {
        "post": {
            "summary": "A guest takes a username and password (its id and ratings stay)",
            "description": "Who may call it: a guest's session. Its sessions end; the answer holds the new one.",
            "security": SESSION_REQUIRED,
            "requestBody": json_body("Upgrade", {"username": "ada", "password": "correct horse battery"}),
            "responses": {**ok("the player and a new session", "Session"), **errors(400, 401, 409, 413)},
        }
    },
    "/api/players/me/password": {
        "post": {
            "summary": "Change an account's password (every session ends; the answer holds a new one)",
            "description": "Who may call it: an account's session, with its current password.",
            "security": SESSION_REQUIRED,
            "requestBody": json_body(
                "PasswordChange",
                {"password": "correct horse battery", "new_password": "staple moon violet kettle"},
            ),
            "responses": {**ok("the player and a new session", "Session"), **errors(400, 401, 409, 413, 429)},
        }
    },
    "/api/sessions": {
        "post": {
            "summary": "Sign in with a username and password",
            "requestBody": json_body("Login", {"username": "ada", "password": "correct horse battery"}),
            "responses": {**ok("signed in", "Session", "201"), **errors(400, 401, 413)},
        },
        "delete": {
            "summary": "End every session of the signed-in player",
            "security": SESSION_REQUIRED,
            "responses": {**ok("how many sessions ended", "Revoked"), **errors(401)},
        },
    },
    "/api/sessions/current": {
        "delete": {
            "summary": "End this session",
            "security": SESSION_REQUIRED,
            "responses": {**ok("ended", "Revoked"), **errors(401)},
        }
    },
}
