"""The match API: views, legal actions, moves, the event log, the live stream, the replay.

A move names the version it was chosen at; the table's atomic commit refuses it (409, with
the current version) if anything moved first. The live stream is server-sent events: each
gateway process subscribes to the table's Redis channel, so every process can serve every
table's watchers, and a reconnecting client resumes from its Last-Event-ID without a gap.
"""

from __future__ import annotations

import time

import orjson
from flask import Blueprint, Response, jsonify, request

from .auth import player_id
from .context import current
from .errors import ApiError, bearer_token, int_field, json_object
from .openapi import TABLE_ID, TOKEN_OPTIONAL, TOKEN_REQUIRED, errors, json_content, ok, ref
from .store import updates_channel

bp = Blueprint("matches", __name__, url_prefix="/api")


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
    body = json_object()
    action = int_field(body, "action")
    version = int_field(body, "version")
    return jsonify(gw.tables.act(table, seat, action, version))


# Event ids are positions in a Redis list, so a cursor past this names no event and would
# not fit the list commands' 64-bit indexes either.
LAST_EVENT_ID = 2**62 - 1


def _after() -> int:
    """Where a reader left off: Last-Event-ID (a reconnecting EventSource) or ?after=."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("after") or "-1"
    try:
        after = int(raw)
    except ValueError:
        raise ApiError(400, "malformed", "'after' (or Last-Event-ID) is an event id") from None
    if not -1 <= after <= LAST_EVENT_ID:
        raise ApiError(400, "malformed", f"'after' is -1 or an event id (at most {LAST_EVENT_ID})")
    return after


@bp.get("/tables/<table_id>/events")
def events(table_id: str):
    after = _after()
    found = current().tables.events(table_id, after)
    return jsonify({"events": found, "last": found[-1]["id"] if found else after})


@bp.get("/tables/<table_id>/events/stream")
def stream(table_id: str):
    gw = current()
    after = _after()
    table = gw.tables.get(table_id)
    # With a seat's token, each move's update also says what `/legal` says for that seat.
    token = bearer_token()
    seat = gw.tables.seat_of(table, token, player_id()) if token is not None else None
    pubsub = gw.redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(updates_channel(table_id))  # before reading the backlog: nothing falls between
    settings = gw.settings

    # Uses only what is captured above, never the request context: the body is streamed
    # after this view has returned.
    def generate():
        cursor = after
        finished = table.status == "finished"
        stop_at = time.monotonic() + settings.stream_max_seconds
        try:
            yield "retry: 1000\n\n"
            while True:
                for entry in gw.store.log(table_id, cursor + 1):
                    cursor += 1
                    yield f"id: {cursor}\nevent: log\ndata: {orjson.dumps(entry).decode()}\n\n"
                if finished:
                    yield "event: end\ndata: {}\n\n"
                    return
                if time.monotonic() > stop_at:
                    return  # the client reconnects with Last-Event-ID
                message = pubsub.get_message(timeout=settings.stream_heartbeat_seconds)
                if message is None:
                    yield ": keepalive\n\n"
                    continue
                update = orjson.loads(message["data"])
                finished = update.get("status") == "finished"
                if seat is not None and "version" in update:
                    update = gw.tables.seat_update(table_id, seat, update)
                yield f"event: update\ndata: {orjson.dumps(update).decode()}\n\n"
        finally:
            pubsub.close()

    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    return Response(generate(), mimetype="text/event-stream", headers=headers)


@bp.get("/tables/<table_id>/replay")
def replay(table_id: str):
    return jsonify(current().tables.replay(table_id))


OPENAPI_SCHEMAS = {
    "Action": {
        "type": "object",
        "required": ["id", "label", "detail"],
        "properties": {
            "id": {"type": "integer", "description": "what a move sends"},
            "label": {"type": "string"},
            "detail": {"type": "object", "description": "the game's ActionDetail message"},
        },
    },
    "View": {
        "type": "object",
        "required": ["table", "version", "status", "seat", "view", "legal_actions", "to_act", "terminal"],
        "properties": {
            "table": {"type": "string"},
            "version": {"type": "integer", "description": "send it back with a move chosen from this view"},
            "status": {"type": "string", "enum": ["waiting", "playing", "finished"]},
            "deadlines": {"type": "object", "additionalProperties": {"type": "number"}},
            "seat": {"type": "integer", "description": "-1 for the public (spectator) view"},
            "view": {"type": "object", "description": "the game's View message: what this seat may see"},
            "legal_actions": {"type": "array", "items": ref("Action")},
            "to_act": {"type": "array", "items": {"type": "integer"}},
            "terminal": {"type": "boolean"},
            "winners": {"type": "array", "items": {"type": "integer"}},
            "turn": {"type": "integer"},
            "decisions": {"type": "integer"},
        },
    },
    "Legal": {
        "type": "object",
        "required": ["table", "version", "seat", "status", "your_turn", "to_act", "legal_actions"],
        "properties": {
            "table": {"type": "string"},
            "version": {"type": "integer"},
            "seat": {"type": "integer"},
            "status": {"type": "string", "enum": ["waiting", "playing", "finished"]},
            "your_turn": {"type": "boolean", "description": "the seat must decide now"},
            "to_act": {"type": "array", "items": {"type": "integer"}},
            "legal_actions": {"type": "array", "items": ref("Action")},
        },
    },
    "Move": {
        "type": "object",
        "required": ["action", "version"],
        "properties": {
            "action": {"type": "integer", "minimum": 0, "maximum": 2147483647},
            "version": {"type": "integer", "minimum": 0, "maximum": 2147483647},
        },
    },
    "Event": {
        "type": "object",
        "required": ["kind", "seat", "text"],
        "properties": {
            "id": {"type": "integer"},
            "version": {"type": "integer"},
            "kind": {"type": "string"},
            "seat": {"type": "integer"},
            "text": {"type": "string"},
        },
    },
    "MoveResult": {
        "type": "object",
        "required": [
            "table",
            "version",
            "status",
            "to_act",
            "events",
            "seat",
            "your_turn",
            "legal_actions",
        ],
        "description": "the move's outcome, and what `/legal` now says for the seat that moved, "
        "so a client needs one request per move",
        "properties": {
            "table": {"type": "string"},
            "version": {"type": "integer", "description": "send it back with the seat's next move"},
            "status": {"type": "string", "enum": ["playing", "finished"]},
            "to_act": {"type": "array", "items": {"type": "integer"}},
            "seat": {"type": "integer", "description": "the seat that moved"},
            "your_turn": {"type": "boolean", "description": "that seat must decide again now"},
            "legal_actions": {
                "type": "array",
                "items": ref("Action"),
                "description": "that seat's legal actions at `version` (empty unless `your_turn`)",
            },
            "winners": {"type": "array", "items": {"type": "integer"}},
            "returns": {
                "type": "array",
                "items": {"type": "number"},
                "description": "the final scores (last move)",
            },
            "events": {"type": "array", "items": ref("Event")},
        },
    },
    "Replay": {
        "type": "object",
        "required": ["game", "players", "seed", "config", "actions"],
        "description": "what `cultists replay FILE` takes",
        "properties": {
            "game": {"type": "string"},
            "players": {"type": "integer"},
            "seed": {"type": "integer"},
            "config": {"type": "object"},
            "actions": {
                "type": "array",
                "items": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2},
            },
        },
    },
}

AFTER = {
    "name": "after",
    "in": "query",
    "description": "the last event id already seen (-1: from the start)",
    "schema": {"type": "integer", "minimum": -1, "maximum": LAST_EVENT_ID},
}

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
            "requestBody": {"required": True, "content": json_content(ref("Move"))},
            "responses": {**ok("the move was applied", "MoveResult"), **errors(400, 401, 403, 404, 409, 413)},
        }
    },
    "/api/tables/{table_id}/events": {
        "get": {
            "operationId": "getEvents",
            "summary": "The public event log after an event id",
            "parameters": [TABLE_ID, AFTER],
            "responses": {
                "200": {
                    "description": "events",
                    "content": json_content(
                        {
                            "type": "object",
                            "required": ["events", "last"],
                            "properties": {
                                "events": {"type": "array", "items": ref("Event")},
                                "last": {"type": "integer"},
                            },
                        }
                    ),
                },
                **errors(400, 404),
            },
        }
    },
    "/api/tables/{table_id}/events/stream": {
        "get": {
            "summary": "Server-sent events: `log` (one event, with id), `update` (version, to_act, status; "
            "with a seat token also that seat's `your_turn` and `legal_actions`), `end`",
            "security": TOKEN_OPTIONAL,
            "parameters": [
                TABLE_ID,
                AFTER,
                {
                    "name": "Last-Event-ID",
                    "in": "header",
                    "schema": {"type": "integer", "minimum": -1, "maximum": LAST_EVENT_ID},
                },
            ],
            "responses": {
                "200": {
                    "description": "the stream",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
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
