"""Matchmaking: queue for a game, look at the ticket, cancel it; and players' ratings.

A matched ticket names its table and seat; the ticket's token is then that seat's token.
"""

from __future__ import annotations

from typing import Literal

from flask import Blueprint, jsonify
from pydantic import Field

from services.gateway.context import current

from .auth import current_player, player_id
from .errors import bearer_token
from .openapi import GAME_PARAM, TOKEN_REQUIRED, errors, json_content, ok, ref
from .schemas import Body, DisplayName, GameName, openapi_components, parse_body

bp = Blueprint("matchmaking", __name__, url_prefix="/api/matchmaking")


@bp.post("/tickets")
def enqueue():
    gw = current()
    signed_in = current_player(required=True)  # rated play: ratings belong to player ids
    assert signed_in is not None
    body = parse_body(NewTicket)
    # `player` is only the name shown at the table; who plays is the session's player.
    gw.engines.require(body.game)
    return jsonify(
        gw.matchmaking.enqueue(body.game, body.players, signed_in.id, body.player or signed_in.name)
    ), 201


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


class NewTicket(Body):
    """Queue for a rated table of `game`; who plays is the session's player."""

    game: GameName
    player: DisplayName | None = Field(None, description="display name (default: the player's)")
    players: int | None = Field(None, ge=1, le=64, description="seats wanted (default: the game's)")


class Ticket(Body):
    ticket: str
    token: str | None = Field(None, description="only when queued: the ticket's and then the seat's secret")
    game: str
    players: int
    player: str = Field(description="display name")
    player_id: str | None = None
    rating: float = Field(description="OpenSkill mu when queued")
    status: Literal["queued", "matched", "cancelled"]
    waited: float = Field(description="seconds queued (until matched)")
    table: str | None
    seat: int | None


class Rating(Body):
    game: str
    player: str
    mu: float
    sigma: float
    ordinal: float = Field(description="mu - 3 sigma, a cautious estimate")


OPENAPI_SCHEMAS = openapi_components(NewTicket, Ticket, Rating)

OPENAPI_PATHS = {
    "/api/matchmaking/tickets": {
        "post": {
            "summary": "Queue for a table; bots fill what is missing after a while",
            "requestBody": {
                "required": True,
                "content": json_content(ref("NewTicket")),
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
