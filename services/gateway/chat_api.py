"""A table's chat (issue 31): seated players post short messages, anyone at the table reads.

`POST /api/tables/{id}/chat` needs the seat's token (and its player's session where the
seat is bound to one), like a move; `GET /api/tables/{id}/chat?after=N` is public, as the
table's event log is: a spectator reads what the players say. Bounds (length, rate, how
many are kept) are `services/platform/chat.py`'s.
"""

from __future__ import annotations

from flask import Blueprint, jsonify, request
from pydantic import ConfigDict, Field

from services.gateway.context import current
from services.platform.chat import KEEP, MAX_CHARS, RATE, WINDOW_SECONDS, TableChat

from .auth import player_id
from .errors import bearer_token
from .openapi import TABLE_ID, TOKEN_REQUIRED, errors, json_body, ok
from .pages.present import display_name
from .schemas import Body, openapi_components, parse_body, query_parameters, validate

bp = Blueprint("chat", __name__, url_prefix="/api")


class ChatPost(Body):
    text: str = Field(
        min_length=1, max_length=MAX_CHARS, description=f"plain text, at most {MAX_CHARS} characters"
    )


class ChatQuery(Body):
    model_config = ConfigDict(strict=False)  # query strings are text

    after: int = Field(0, ge=0, description="only messages with a higher id")


class ChatMessage(Body):
    id: int = Field(description="rises by one per message of this table")
    seat: int
    name: str = Field(description="the seat's name as the table page shows it")
    text: str = Field(description="plain text: show it as text, never as markup")
    at: float = Field(description="unix seconds")


class ChatMessages(Body):
    messages: list[ChatMessage]


@bp.post("/tables/<table_id>/chat")
def say(table_id: str):
    gw = current()
    table = gw.tables.get(table_id)
    seat = gw.tables.seat_of(table, bearer_token(), player_id())  # 401/403 before the body
    body = parse_body(ChatPost)
    message = TableChat(gw.redis).say(table.id, seat, display_name(table.seats[seat]), body.text)
    return jsonify(message)


@bp.get("/tables/<table_id>/chat")
def read(table_id: str):
    gw = current()
    table = gw.tables.get(table_id)
    after = validate(ChatQuery, request.args.to_dict()).after
    return jsonify({"messages": TableChat(gw.redis).read(table.id, after)})


OPENAPI_SCHEMAS = openapi_components(ChatPost, ChatMessage, ChatMessages)

OPENAPI_PATHS = {
    "/api/tables/{table_id}/chat": {
        "post": {
            "summary": "Say something to the table (a seated player)",
            "description": f"Who may call it: a seated player: the seat's token, and its player's "
            f"session where the seat is bound to one (as for a move); spectators cannot post. At most "
            f"{MAX_CHARS} characters, {RATE} messages per {WINDOW_SECONDS} s per seat (429 "
            f"`chat_limited` with Retry-After); the table keeps its newest {KEEP}.",
            "parameters": [TABLE_ID],
            "security": TOKEN_REQUIRED,
            "requestBody": json_body("ChatPost", {"text": "good luck!"}),
            "responses": {**ok("the message as kept", "ChatMessage"), **errors(400, 401, 403, 404, 429)},
        },
        "get": {
            "summary": "The table chat's kept messages, oldest first",
            "description": "Who may call it: anyone (a spectator reads the chat, as the event log).",
            "parameters": [TABLE_ID, *query_parameters(ChatQuery)],
            "responses": {**ok("the messages", "ChatMessages"), **errors(400, 404)},
        },
    }
}
