"""Matchmaking: queue for a game, look at the ticket, cancel it; and players' ratings.

A matched ticket names its table and seat; the ticket's token is then that seat's token.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Literal

import orjson
from flask import Blueprint, Response, jsonify, request
from pydantic import ConfigDict, Field

from services.gateway.context import current
from services.platform.context import Platform
from services.platform.errors import PlatformError
from services.platform.stream_hub import Subscription
from services.platform.tickets import ticket_channel_of

from .auth import current_player, player_id
from .errors import bearer_token
from .openapi import GAME_PARAM, SESSION, STREAM_TICKET, TICKET, errors, json_body, ok
from .schemas import Body, DisplayName, GameName, openapi_components, parse_body, query_parameters, validate
from .sse import KEEPALIVE, RETRY, frame
from .versions import created, url

bp = Blueprint("matchmaking", __name__, url_prefix="/api/matchmaking")


@bp.post("/tickets")
def enqueue():
    gw = current()
    signed_in = current_player(required=True)  # rated play: ratings belong to player ids
    assert signed_in is not None
    body = parse_body(NewTicket)
    # `player` is only the name shown at the table; who plays is the session's player.
    gw.engines.require(body.game)
    ticket = gw.matchmaking.enqueue(body.game, body.players, signed_in.id, body.player or signed_in.name)
    return created(ticket, f"/api/matchmaking/tickets/{ticket['ticket']}")


@bp.get("/tickets/<ticket_id>")
def ticket(ticket_id: str):
    return jsonify(current().matchmaking.status(ticket_id, bearer_token(), player_id()))


@bp.post("/tickets/<ticket_id>/stream-ticket")
def ticket_stream_ticket(ticket_id: str):
    """A single-use stream ticket for this matchmaking ticket's stream (EventSource)."""
    gw = current()
    token_hash = gw.matchmaking.authorise(ticket_id, bearer_token(), player_id())
    ticket, expires = gw.stream_tickets.issue({"kind": "ticket", "ticket": ticket_id, "token": token_hash})
    link = url(f"/api/matchmaking/tickets/{ticket_id}/stream") + f"?ticket={ticket}"
    return created({"ticket": ticket, "expires": expires, "url": link}, link)


class TicketStreamQuery(Body):
    model_config = ConfigDict(strict=False, extra="forbid")  # query strings are text

    ticket: str | None = Field(
        None, min_length=1, max_length=64, description="a stream ticket (POST .../stream-ticket)"
    )


@bp.get("/tickets/<ticket_id>/stream")
def ticket_stream(ticket_id: str):
    """Server-sent events: `state` (the ticket now), then `bots_filled` (its table got
    bots for the seats nobody fitted) and `matched` (table and seat: the ticket's token is
    now that seat's), or `cancelled`; then `end`."""
    gw = current()
    query = validate(TicketStreamQuery, request.args.to_dict())
    if query.ticket is not None:
        _redeem_ticket_pass(ticket_id, query.ticket)
    else:
        gw.matchmaking.status(ticket_id, bearer_token(), player_id())  # 401/403/404 as GET does
    channel = ticket_channel_of(ticket_id)
    assert channel is not None  # the checks above refused a ticket id that names no queue
    # Sharded pub/sub in the ticket's queue's slot, heard through the process's one
    # subscription per node and confirmed before reading: no change falls between.
    subscription = gw.streams.subscribe(channel)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(ticket_events(gw, ticket_id, subscription), mimetype="text/event-stream", headers=headers)


def _redeem_ticket_pass(ticket_id: str, ticket: str) -> None:
    """401 unless `ticket` is a live stream ticket for this matchmaking ticket, used now."""
    gw = current()
    subject = gw.stream_tickets.redeem(ticket)
    token = gw.matchmaking.token_hash(ticket_id) if subject is not None else None
    if (
        subject is None
        or subject.get("kind") != "ticket"
        or subject.get("ticket") != ticket_id
        or token is None
        or token != subject.get("token")
    ):
        raise PlatformError(
            401, "invalid_ticket", "that stream ticket is unknown, used or expired; ask for a new one"
        )


def ticket_events(gw: Platform, ticket_id: str, subscription: Subscription) -> Iterator[bytes]:
    """A matchmaking ticket's stream, from the subscription opened before the first read.
    Uses only what it is given, never the request context (it runs after the view)."""
    settings = gw.settings
    stop_at = time.monotonic() + settings.stream_max_seconds
    try:
        yield RETRY
        ticket = gw.matchmaking.current(ticket_id)
        if ticket is None:
            yield frame("end", {})
            return
        yield frame("state", ticket)
        while ticket["status"] == "queued":
            if time.monotonic() > stop_at:
                return  # the client reconnects; its first event is the state again
            message = subscription.get(timeout=settings.stream_heartbeat_seconds)
            if subscription.ended:
                return  # shutdown or a lost subscription: the client reconnects
            if message is None:
                yield KEEPALIVE
                continue
            ticket = orjson.loads(message)
        if ticket["status"] == "matched":
            if ticket.get("bots"):
                yield frame("bots_filled", ticket)
            yield frame("matched", ticket)
        else:
            yield frame("cancelled", ticket)
        yield frame("end", {})
    finally:
        subscription.close()


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
    bots: int | None = Field(None, description="once matched: how many seats of its table bots filled")


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
            "requestBody": json_body("NewTicket", {"game": "tricky_cultists", "players": 4}),
            "security": SESSION,
            "responses": {**ok("queued", "Ticket", "201"), **errors(400, 401, 404, 409, 413)},
        }
    },
    "/api/matchmaking/tickets/{ticket_id}": {
        "get": {
            "summary": "The ticket: queued, or matched with its table and seat",
            "parameters": [TICKET_ID],
            "security": TICKET,
            "responses": {**ok("the ticket", "Ticket"), **errors(401, 403, 404)},
        },
        "delete": {
            "summary": "Cancel a queued ticket",
            "parameters": [TICKET_ID],
            "security": TICKET,
            "responses": {**ok("cancelled", "Ticket"), **errors(401, 403, 404, 409)},
        },
    },
    "/api/matchmaking/tickets/{ticket_id}/stream-ticket": {
        "post": {
            "summary": "A single-use ticket (30 s) to follow this ticket's stream with `?ticket=`",
            "parameters": [TICKET_ID],
            "security": TICKET,
            "responses": {**ok("the stream ticket", "StreamTicket", "201"), **errors(401, 403, 404)},
        }
    },
    "/api/matchmaking/tickets/{ticket_id}/stream": {
        "get": {
            "summary": "Server-sent events: first `state` (a Ticket), then `bots_filled` (when bots "
            "took the seats nobody fitted), `matched` (a Ticket with table and seat: its token is now "
            "that seat's) or `cancelled`, then `end`",
            "parameters": [TICKET_ID, *query_parameters(TicketStreamQuery)],
            "security": [*TICKET, *STREAM_TICKET],
            "responses": {
                "200": {
                    "description": "the stream",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                },
                **errors(400, 401, 403, 404),
            },
        }
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
