"""The match API: views, legal actions, moves, the event log, the live stream, the replay.

A move names the version it was chosen at; the table's atomic commit refuses it (409, with
the current version) if anything moved first. The live stream is server-sent events: each
gateway process subscribes to the table's Redis channel, so every process can serve every
table's watchers, and a reconnecting client resumes from its Last-Event-ID without a gap.
"""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal, TypeVar

from flask import Blueprint, Response, jsonify, request
from pydantic import ConfigDict, Field

from services.gateway.context import current
from services.platform.errors import PlatformError
from services.platform.keys import updates_channel
from services.platform.store import Table

from . import rate_limit_headers
from .auth import player_id
from .errors import bearer_token
from .openapi import STREAM_TICKET, TABLE_ID, TOKEN_OPTIONAL, TOKEN_REQUIRED, errors, json_body, ok
from .schemas import Body, SeatScore, component, openapi_components, parse_body, query_parameters, validate
from .table_stream import TableStream
from .versions import created, url

bp = Blueprint("matches", __name__, url_prefix="/api")

INT32 = 2**31 - 1


class Move(Body):
    """A move: one of the seat's legal action ids, chosen at a version of the table."""

    action: int = Field(ge=0, le=INT32, description="the id of one of the seat's legal actions")
    version: int = Field(ge=0, le=INT32, description="the table's version the action was chosen at")


PAYLOAD = (
    "its facts for programs, typed by game and kind (the `<Game>Event` schemas): "
    "created {game, players}, joined {player, player_id}, left {}, timeout {bot, action, label}, "
    "and each game's own kinds (its EventPayload message: `card` an object {id, name}, a "
    "targeted seat `target`, a field that does not apply absent)"
)


class Event(Body):
    """An event of a game: structured (`kind`, `seat`, `payload`) beside the words
    (`text`); a table's log numbers its own (`LogEvent`), a replay's rebuilt step does not."""

    id: int | None = Field(None, description="its position in the log: the stream's event id")
    version: int | None = Field(None, description="the table's version it belongs to")
    at: float | None = Field(None, description="unix seconds it was written")
    kind: str = Field(description="created, joined, left, timeout, or the game's own kinds")
    seat: int = Field(description="-1 for the table itself")
    payload: dict[str, Any] | None = Field(None, description=PAYLOAD)
    text: str


class LogEvent(Body):
    """One line of a table's public event log: structured (`id`, `version`, `at`, `kind`,
    `seat`, `payload`) beside the words (`text`). The same entry wherever it is sent: a
    page of `GET .../events`, a move's answer, the stream's `log` events and each
    `update`'s `events` (the `<Game>Event` schemas type it by game)."""

    id: int = Field(ge=0, description="its position in the log: the stream's event id")
    version: int = Field(ge=0, description="the table's version it belongs to")
    at: float = Field(description="unix seconds it was written")
    kind: str = Field(description="created, joined, left, timeout, or the game's own kinds")
    seat: int = Field(description="-1 for the table itself")
    payload: dict[str, Any] = Field(description=PAYLOAD)
    text: str = Field(description="the same in words")


class ActionCard(Body):
    """A card an action names, as every game names it: an object, never a bare string."""

    model_config = ConfigDict(extra="allow")

    id: str = Field(description="the card's id in its game (a name, or a number as text)")
    name: str = Field(description="the card as printed")


class Action(Body):
    """One legal action: `id` is what a move sends; `kind`, `card` and `target` are the
    words every game shares (absent where they do not apply); `detail` is the game's own."""

    id: int = Field(description="what a move sends")
    label: str
    kind: str | None = Field(None, description="the action's family: play, discard, add, keep, pass, ...")
    card: ActionCard | None = Field(None, description="the card it names, if any")
    target: int | None = Field(None, description="the seat it targets, if any")
    detail: Annotated[dict[str, Any], component("GameActionDetail")] = Field(
        description="the game's ActionDetail message (GameActionDetail: one schema per game)"
    )


class MoveResult(Body):
    """What a move did; the move that ends the game also carries the final scores."""

    table: str
    game: str = Field(description="the table's game: what the events' payloads are typed by")
    version: int
    status: Literal["playing", "finished"]
    to_act: list[int]
    winners: list[int] = []
    returns: list[float] | None = Field(None, description="the engine's result per seat (last move)")
    scores: list[SeatScore] | None = Field(
        None, description="the last move: each seat's final score and what made it"
    )
    events: list[LogEvent] = Field(
        description="what the move wrote to the log, as GET .../events gives it (the same ids)"
    )
    seat: int = Field(description="the seat that moved")
    your_turn: bool = Field(description="that seat must decide again now")
    legal_actions: list[Action] = Field(
        description="that seat's legal actions at `version` (empty unless `your_turn`): "
        "with them a client needs one request per move"
    )


@bp.get("/tables/<table_id>/view")
def view(table_id: str):
    return jsonify(current().tables.view(table_id, bearer_token(), player_id()))


@bp.get("/tables/<table_id>/legal")
def legal(table_id: str):
    return jsonify(current().tables.legal(table_id, bearer_token(), player_id()))


@bp.post("/tables/<table_id>/actions")
def act(table_id: str):
    gw = current()
    table = gw.tables.get(table_id)
    seat = gw.tables.seat_of(table, bearer_token(), player_id())  # 401/403 before looking at the body
    # Moves are limited per seat and per decision, not by the write limits (guards.py).
    tries = gw.move_limits.count(table, seat, time.time())
    rate_limit_headers.note(tries.limit, tries.remaining, tries.reset_seconds, "decision")
    if tries.refused:
        raise PlatformError(
            429,
            "move_limited",
            f"seat {seat} sent more than {tries.limit} moves at version {table.version}; "
            "wait for the table to move on (the stream says when)",
            retry_after=tries.reset_seconds,
        )
    move = parse_body(Move)
    return jsonify(gw.tables.act(table, seat, move.action, move.version))


@bp.post("/tables/<table_id>/stream-ticket")
def stream_ticket(table_id: str):
    """A single-use ticket to open this seat's stream with `?ticket=` (a browser's
    EventSource cannot send the token's header)."""
    gw = current()
    table = gw.tables.get(table_id)
    seat = gw.tables.seat_of(table, bearer_token(), player_id())
    subject = {"kind": "seat", "table": table.id, "seat": seat, "token": table.seats[seat].token_hash}
    ticket, expires = gw.stream_tickets.issue(subject)
    link = url(f"/api/tables/{table.id}/events/stream") + f"?ticket={ticket}"
    return created({"ticket": ticket, "expires": expires, "url": link}, link)


def _ticket_seat(table: Table, ticket: str) -> int:
    """The seat a stream ticket was issued for, once; 401 if it is unknown, used, expired,
    for another stream, or its seat's token changed since."""
    subject = current().stream_tickets.redeem(ticket)
    if (
        subject is None
        or subject.get("kind") != "seat"
        or subject.get("table") != table.id
        or not 0 <= int(subject.get("seat", -1)) < table.players
        or table.seats[int(subject["seat"])].token_hash != subject.get("token")
    ):
        raise PlatformError(
            401, "invalid_ticket", "that stream ticket is unknown, used or expired; ask for a new one"
        )
    return int(subject["seat"])


# Event ids are positions in a Redis list, so a cursor past this names no event and would
# not fit the list commands' 64-bit indexes either.
LAST_EVENT_ID = 2**62 - 1


# A page of the event log: a whole game's log is a few thousand lines at most, read in a
# few pages; one reply never carries more than this.
MAX_EVENTS_PAGE = 1000


class StreamQuery(Body):
    # Query strings and headers are text; a parameter the API does not know is refused
    # (400), so a misspelt cursor is never silently read as "from the start".
    model_config = ConfigDict(strict=False, extra="forbid")

    after: int = Field(
        -1, ge=-1, le=LAST_EVENT_ID, description="the last event id already seen (-1: from the start)"
    )


class SeatStreamQuery(StreamQuery):
    ticket: str | None = Field(
        None,
        min_length=1,
        max_length=64,
        description="a stream ticket (POST .../stream-ticket): follow that seat without its token",
    )


class EventsQuery(StreamQuery):
    limit: int = Field(200, ge=1, le=MAX_EVENTS_PAGE, description="most events in one page")


Q = TypeVar("Q", bound=StreamQuery)


def _query(model: type[Q]) -> Q:
    """The query, with Last-Event-ID (a reconnecting EventSource) standing for ?after=."""
    args = request.args.to_dict()
    resumed = request.headers.get("Last-Event-ID")
    if resumed is not None:
        args["after"] = resumed
    return validate(model, args)


@bp.get("/tables/<table_id>/events")
def events(table_id: str):
    query = _query(EventsQuery)
    found, more, game = current().tables.events(table_id, query.after, query.limit)
    last = found[-1]["id"] if found else query.after
    return jsonify({"game": game, "events": found, "last": last, "more": more})


@bp.get("/tables/<table_id>/events/stream")
def stream(table_id: str):
    gw = current()
    query = _query(SeatStreamQuery)
    after = query.after
    gw.streams.check_room()  # past the cap: 503 before any read
    reads = gw.stream_tables  # the streams' own small pool, not the requests' (context.py)
    with gw.streams.reading():
        table = reads.get(table_id)
    # With a seat's token (or a stream ticket for one), the state and each update also
    # say what `/legal` says for that seat.
    token = bearer_token()
    if query.ticket is not None:
        seat: int | None = _ticket_seat(table, query.ticket)
    else:
        seat = gw.tables.seat_of(table, token, player_id()) if token is not None else None
    # The process's one subscription per Redis node hears the table's sharded channel;
    # confirmed before anything is read, so nothing falls between (stream_hub.py).
    subscription = gw.streams.subscribe(updates_channel(table_id))
    settings = gw.settings
    # Uses only what is captured here, never the request context: the body is sent after
    # this view has returned (table_stream.py; pushed by the process's fan-out under
    # gunicorn, pushed_streams.py).
    body = TableStream(
        gw.streams, reads, subscription, table_id, seat, after,
        settings.stream_max_seconds, settings.stream_heartbeat_seconds,
    )  # fmt: skip
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return StreamResponse(body, mimetype="text/event-stream", headers=headers)


class StreamResponse(Response):
    """An event stream's response: its body is the TableStream itself, not werkzeug's
    encoding iterator around it, so a server that can take the connection over finds
    `hand_off` on it (services/runtime/gunicorn_worker.py) along with the server's own
    `start_response`; any other server iterates it as bytes."""

    def get_app_iter(self, environ: Any) -> Any:
        stream = self.response
        if not isinstance(stream, TableStream):
            return super().get_app_iter(environ)
        if environ["REQUEST_METHOD"] == "HEAD":  # no body: its subscription is let go now
            stream.close()
            return ()
        return stream

    def __call__(self, environ: Any, start_response: Any) -> Any:
        app_iter = super().__call__(environ, start_response)
        if isinstance(app_iter, TableStream):
            app_iter.start_response = start_response
        return app_iter


@bp.get("/tables/<table_id>/replay")
def replay(table_id: str):
    return jsonify(current().tables.replay(table_id))


Status = Literal["waiting", "playing", "finished"]


class View(Body):
    """What one seat (or a spectator, seat -1) may see now, with its legal actions."""

    table: str
    version: int = Field(description="send it back with a move chosen from this view")
    status: Status
    deadlines: dict[str, float] = {}
    seat: int = Field(description="-1 for the public (spectator) view")
    view: Annotated[dict[str, Any], component("GameView")] = Field(
        description="the game's View message: what this seat may see (GameView: one schema per game)"
    )
    legal_actions: list[Action]
    to_act: list[int]
    terminal: bool
    winners: list[int] = []
    turn: int | None = None
    decisions: int | None = None


class Legal(Body):
    """The seat's legal actions now, and why the list may be empty."""

    table: str
    version: int
    seat: int
    status: Status
    your_turn: bool = Field(description="the seat must decide now")
    to_act: list[int]
    legal_actions: list[Action]


class Replay(Body):
    """What `cultists replay FILE` takes."""

    game: str
    players: int
    seed: int
    config: dict[str, Any]
    actions: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(
        description="[seat, action] pairs, in order"
    )
    deal_key: str | None = Field(
        None,
        description="the 64 hex digits of the ChaCha20 key the deal was drawn from, secret while "
        "the table lived (docs/fairness.md); absent where the seed alone deals (a chosen seed)",
    )


class Events(Body):
    """A page of the log. The document types it by game (`Events`: one of the games'
    pages, each event's payload typed by its kind: openapi.event_schemas)."""

    game: str = Field(description="the table's game: what the events' payloads are typed by")
    events: list[LogEvent]
    last: int = Field(description="the id to pass as `after` for the next page")
    more: bool = Field(description="more events follow this page")


class StreamState(Body):
    """A stream's `state` event (its first) and every `update`: the table as it is now.
    A seat's stream also carries what `/legal` says for that seat, and its deadline; an
    update also the log entries it follows (`events`, typed by `game`)."""

    table: str
    game: str = Field(description="the table's game: what the events' payloads are typed by")
    version: int
    status: Literal["waiting", "playing", "finished"]
    to_act: list[int]
    deadlines: dict[str, float] = Field(description="seat -> unix time its decision is due")
    view: Annotated[dict[str, Any], component("GameView")] = Field(
        description="the game's View message: the seat's own, or the public one"
    )
    seat: int | None = Field(None, description="a seat's stream: that seat")
    your_turn: bool | None = Field(None, description="a seat's stream: it must decide now")
    legal_actions: list[Action] | None = Field(None, description="a seat's stream: its choices now")
    deadline: float | None = Field(None, description="a seat's stream: when its decision is due")
    events: list[LogEvent] | None = Field(
        None,
        description="an `update`: the log entries of the changes since the stream's previous state or "
        "update, as GET .../events gives them, each also sent before it as a `log` event (none if an "
        "earlier update carried them; the state is never older than they are)",
    )


class StreamTicket(Body):
    """A single-use pass to open one stream with `?ticket=` (a browser EventSource)."""

    ticket: str
    expires: float = Field(description="unix seconds; it is good once, until then")
    url: str = Field(description="the stream's URL with the ticket (also the Location)")


OPENAPI_SCHEMAS = openapi_components(
    Move, MoveResult, LogEvent, View, Legal, Replay, Events, StreamState, StreamTicket
)

[AFTER, LIMIT] = query_parameters(EventsQuery)
[_, TICKET] = query_parameters(SeatStreamQuery)

OPENAPI_PATHS = {
    "/api/tables/{table_id}/view": {
        "get": {
            "operationId": "getView",
            "summary": "With a seat token: that seat's view and legal actions; without: the public view",
            "parameters": [TABLE_ID],
            "security": TOKEN_OPTIONAL,
            "responses": {**ok("the view", "View"), **errors(403, 404)},
        }
    },
    "/api/tables/{table_id}/legal": {
        "get": {
            "summary": "The seat's legal actions now (empty unless it must decide)",
            "parameters": [TABLE_ID],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("legal actions", "Legal"), **errors(401, 403, 404)},
        }
    },
    "/api/tables/{table_id}/actions": {
        "post": {
            "summary": "Make a move chosen at `version`; 409 with the current version if the table moved on",
            "parameters": [TABLE_ID],
            "security": TOKEN_REQUIRED,
            "requestBody": json_body("Move", {"action": 3, "version": 12}),
            "responses": {**ok("the move was applied", "MoveResult"), **errors(400, 401, 403, 404, 409, 413)},
        }
    },
    "/api/tables/{table_id}/stream-ticket": {
        "post": {
            "summary": "A single-use ticket (30 s) to follow this seat's stream with `?ticket=` "
            "(a browser EventSource cannot send the token)",
            "parameters": [TABLE_ID],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("the ticket", "StreamTicket", "201"), **errors(401, 403, 404)},
        }
    },
    "/api/tables/{table_id}/events": {
        "get": {
            "operationId": "getEvents",
            "summary": "A page of the public event log after an event id (`more`: another page follows)",
            "parameters": [TABLE_ID, AFTER, LIMIT],
            "responses": {**ok("events", "Events"), **errors(400, 404)},
        }
    },
    "/api/tables/{table_id}/events/stream": {
        "get": {
            "summary": "Server-sent events: first `state` (a StreamState: the table now, with a seat "
            "token also that seat's view, `your_turn`, `legal_actions` and deadline), then `log` (one "
            "LogEvent, as GET .../events gives it, typed by the state's `game`: its `<Game>Event`) and "
            "`update` (after every change: the StreamState after it, with the change's own fields and "
            "`events`, the log entries it follows), and `end` once the game is over",
            "security": [*TOKEN_OPTIONAL, *STREAM_TICKET],
            "parameters": [
                TABLE_ID,
                AFTER,
                TICKET,
                {**AFTER, "name": "Last-Event-ID", "in": "header"},
            ],
            "responses": {
                "200": {
                    "description": "the stream; each event's data is JSON, as `x-events` lists by name",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                    # OpenAPI 3.0 cannot type an event stream: each event's data by its name.
                    "x-events": {
                        "state": {"$ref": "#/components/schemas/StreamState"},
                        "log": {"$ref": "#/components/schemas/LogEvent"},
                        "update": {"$ref": "#/components/schemas/StreamState"},
                        "end": {"type": "object", "additionalProperties": False},
                    },
                },
                **errors(400, 404),
            },
        }
    },
    "/api/tables/{table_id}/replay": {
        "get": {
            "operationId": "getReplay",
            "summary": "After the end: config, seed and actions, which `cultists replay` rebuilds",
            "parameters": [TABLE_ID],
            "responses": {**ok("the replay record", "Replay"), **errors(404, 409)},
        }
    },
}
