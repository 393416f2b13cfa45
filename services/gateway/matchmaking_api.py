"""Matchmaking: queue for a game, look at the ticket, cancel it; and players' ratings.

A matched ticket names its table and seat; the ticket's token is then that seat's token.
"""

from __future__ import annotations

from flask import Blueprint, jsonify

from .auth import current_player, player_id
from .context import current
from .errors import ApiError, bearer_token, int_field, json_object, str_field
from .openapi import GAME_NAME, GAME_PARAM, TOKEN_REQUIRED, errors, json_content, ok

bp = Blueprint("matchmaking", __name__, url_prefix="/api/matchmaking")


@bp.post("/tickets")
def enqueue():
    gw = current()
    signed_in = current_player(required=True)  # rated play: ratings belong to player ids
    assert signed_in is not None
    body = json_object()
    game = str_field(body, "game")
    if game is None:
        raise ApiError(400, "malformed", "'game' is required")
    # `player` is only the name shown at the table; who plays is the session's player.
    name = str_field(body, "player") or signed_in.name
    gw.engines.require(game)
    players = body.get("players")
    if players is not None:
        players = int_field(body, "players", low=1, high=64)
    return jsonify(gw.matchmaking.enqueue(game, players, signed_in.id, name)), 201


@bp.get("/tickets/<ticket_id>")
def ticket(ticket_id: str):
    return jsonify(current().matchmaking.status(ticket_id, bearer_token(), player_id()))


@bp.delete("/tickets/<ticket_id>")
def cancel(ticket_id: str):
    return jsonify(current().matchmaking.cancel(ticket_id, bearer_token(), player_id()))


@bp.get("/ratings/<game>/<player>")
def rating(game: str, player: str):
    """By player id (ratings are never kept by a name anyone could type)."""
    gw = current()
    gw.engines.require(game)
    mu, sigma = gw.ratings.get(game, player)
    return jsonify({"game": game, "player": player, "mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma})


TICKET_ID = {"name": "ticket_id", "in": "path", "required": True, "schema": {"type": "string"}}

OPENAPI_SCHEMAS = {
    "Ticket": {
        "type": "object",
        "required": ["ticket", "game", "players", "player", "rating", "status", "waited", "table", "seat"],
        "properties": {
            "ticket": {"type": "string"},
            "token": {
                "type": "string",
                "description": "only when queued: the ticket's and then the seat's secret",
            },
            "game": {"type": "string"},
            "players": {"type": "integer"},
            "player": {"type": "string", "description": "display name"},
            "player_id": {"type": "string", "nullable": True},
            "rating": {"type": "number", "description": "OpenSkill mu when queued"},
            "status": {"type": "string", "enum": ["queued", "matched", "cancelled"]},
            "waited": {"type": "number", "description": "seconds queued (until matched)"},
            "table": {"type": "string", "nullable": True},
            "seat": {"type": "integer", "nullable": True},
        },
    },
    "Rating": {
        "type": "object",
        "required": ["game", "player", "mu", "sigma", "ordinal"],
        "properties": {
            "game": {"type": "string"},
            "player": {"type": "string"},
            "mu": {"type": "number"},
            "sigma": {"type": "number"},
            "ordinal": {"type": "number", "description": "mu - 3 sigma, a cautious estimate"},
        },
    },
}

OPENAPI_PATHS = {
    "/api/matchmaking/tickets": {
        "post": {
            "summary": "Queue for a table; bots fill what is missing after a while",
            "requestBody": {
                "required": True,
                "content": json_content(
                    {
                        "type": "object",
                        "required": ["game"],
                        "properties": {
                            "game": GAME_NAME,
                            "player": {
                                "type": "string",
                                "minLength": 1,
                                "maxLength": 64,
                                "description": "display name (default: the player's)",
                            },
                            "players": {"type": "integer", "minimum": 1, "maximum": 64},
                        },
                    }
                ),
            },
            "security": [{"PlayerSession": []}],
            "responses": {**ok("queued", "Ticket", "201"), **errors(400, 401, 404, 409, 413)},
        }
    },
    "/api/matchmaking/tickets/{ticket_id}": {
        "get": {
            "summary": "The ticket: queued, or matched with its table and seat",
            "parameters": [TICKET_ID],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("the ticket", "Ticket"), **errors(401, 403, 404)},
        },
        "delete": {
            "summary": "Cancel a queued ticket",
            "parameters": [TICKET_ID],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("cancelled", "Ticket"), **errors(401, 403, 404, 409)},
        },
    },
    "/api/matchmaking/ratings/{game}/{player}": {
        "get": {
            "summary": "A player's rating in a game, by player id (the default for a newcomer)",
            "parameters": [
                GAME_PARAM,
                {"name": "player", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {**ok("the rating", "Rating"), **errors(404)},
        }
    },
}
