"""The OpenAPI 3 document: shared pieces here, each blueprint's paths beside its routes.

Every blueprint module exports `OPENAPI_PATHS` (and may export `OPENAPI_SCHEMAS`); the app
factory merges them, so a route and its documentation change in the same file, and a test
checks that every /api route in the url map appears here.
"""

from __future__ import annotations

from typing import Any

from .schemas import Error, SeatScore, openapi_components

VERSION = "1.0.0"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def ok(description: str, schema_name: str, status: str = "200") -> dict[str, Any]:
    return {status: {"description": description, "content": json_content(ref(schema_name))}}


_ERROR_TEXT = {
    400: "malformed request, or an action the engine refuses",
    401: "the seat's or ticket's token, or a needed player session, is missing or expired",
    403: "the token does not hold this seat or ticket, or it belongs to another player",
    404: "no such game, table, seat or ticket",
    409: "the table moved on (stale version) or is not in a state that allows this",
    413: "the body is too large",
    429: "too many writes from this address or player; see Retry-After",
    503: "the game's engine is not answering, or the gateway is busy (see Retry-After)",
}


def error_reply(description: str) -> dict[str, Any]:
    """One error reply in the shared `Error` shape, described in the endpoint's own words."""
    return {"description": description, "content": json_content(ref("Error"))}


def errors(*statuses: int) -> dict[str, Any]:
    """Error replies; 429 (rate limits) and 503 may answer any request."""
    return {str(s): error_reply(_ERROR_TEXT[s]) for s in sorted({*statuses, 429, 503})}


TOKEN_REQUIRED: list[dict[str, list[str]]] = [{"SeatToken": []}, {"SeatTokenHeader": []}]
TOKEN_OPTIONAL: list[dict[str, list[str]]] = [{}, *TOKEN_REQUIRED]

TABLE_ID = {
    "name": "table_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
}

SCHEMAS: dict[str, Any] = openapi_components(Error, SeatScore)


GAME_NAME = ref("GameName")
GAME_PARAM = {"name": "game", "in": "path", "required": True, "schema": GAME_NAME}


def document(paths: dict[str, Any], schemas: dict[str, Any], games: list[str]) -> dict[str, Any]:
    """The whole document; `games` are the names this gateway serves (an enum, so clients
    and generated tests know them)."""
    game_name = {"type": "string", "enum": games} if games else {"type": "string"}
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Cultists gateway",
            "version": VERSION,
            "description": (
                "Lobby, tables, seats, matchmaking and the match API for Crazy Cultists, "
                'Trash Cult and Tricky Cultists. Errors are `{"error": {"code", "message"}}`.'
            ),
        },
        "paths": paths,
        "components": {
            "schemas": {**SCHEMAS, "GameName": game_name, **schemas},
            "securitySchemes": {
                "SeatToken": {"type": "http", "scheme": "bearer"},
                "SeatTokenHeader": {"type": "apiKey", "in": "header", "name": "X-Seat-Token"},
                "PlayerSession": {"type": "apiKey", "in": "header", "name": "X-Player-Token"},
            },
        },
    }
