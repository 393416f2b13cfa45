"""Lobby: the games on offer, opening tables, listing open ones, taking and leaving seats."""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from .auth import current_player, player_id
from .context import current
from .errors import (
    ApiError,
    bearer_token,
    int_field,
    json_object,
    number_field,
    optional_json_object,
    str_field,
)
from .openapi import GAME_NAME, GAME_PARAM, TABLE_ID, TOKEN_REQUIRED, errors, json_content, ok, ref

bp = Blueprint("lobby", __name__, url_prefix="/api")

TABLE_LIST_LIMIT = 200


@bp.get("/games")
def list_games():
    gw = current()
    return jsonify({"games": [gw.engines.description_json(g) for g in gw.engines.games]})


@bp.get("/games/<game>")
def get_game(game: str):
    return jsonify(current().engines.description_json(game))


@bp.get("/tables")
def list_tables():
    status = request.args.get("status", "waiting")
    if status not in ("waiting", "playing"):
        raise ApiError(400, "malformed", "'status' is 'waiting' or 'playing'")
    game = request.args.get("game")
    gw = current()
    tables = gw.store.tables(status, TABLE_LIST_LIMIT)
    return jsonify({"tables": [gw.tables.summary(t) for t in tables if game is None or t.game == game]})


@bp.post("/tables")
def create_table():
    gw = current()
    body = json_object()
    game = str_field(body, "game")
    if game is None:
        raise ApiError(400, "malformed", "'game' is required")
    gw.engines.require(game)
    players = body.get("players")
    if players is not None:
        players = int_field(body, "players", low=1, high=64)
    config = body.get("config")
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ApiError(400, "malformed", "'config' must be an object of config fields")
    seats = body.get("seats")
    bots: list[str | None] | None = None
    if seats is not None:
        if not isinstance(seats, list) or not all(isinstance(s, dict) for s in seats):
            raise ApiError(
                400, "malformed", '\'seats\' must be a list of {"kind": "human"|"bot", "bot": name}'
            )
        bots = [_seat_bot(s) for s in seats]
    settings = gw.settings
    decision = number_field(
        body,
        "decision_seconds",
        settings.decision_seconds,
        settings.min_decision_seconds,
        settings.max_decision_seconds,
    )
    seed = body.get("seed")
    if seed is not None:
        seed = int_field(body, "seed", high=2**63 - 1)
    table = gw.tables.open_table(game, players, config, bots, decision, seed=seed)
    assert table is not None  # only a watched (matchmaking) open can fail
    return jsonify(gw.tables.summary(table)), 201


def _seat_bot(seat: dict) -> str | None:
    kind = seat.get("kind", "human")
    if kind == "human":
        return None
    if kind != "bot":
        raise ApiError(400, "malformed", "a seat's 'kind' is 'human' or 'bot'")
    return str_field(seat, "bot", default="random")


@bp.get("/tables/<table_id>")
def get_table(table_id: str):
    tables = current().tables
    return jsonify(tables.summary(tables.get(table_id)))


@bp.post("/tables/<table_id>/seats/<int:seat>")
def join_seat(table_id: str, seat: int):
    body = optional_json_object()
    signed_in = current_player()
    # The name shown at the table: the body's, else the signed-in player's display name.
    player = str_field(body, "player") or (signed_in.name if signed_in else None)
    table, token = current().tables.join(table_id, seat, player, signed_in.id if signed_in else None)
    return jsonify({"table": table.id, "seat": seat, "token": token, "status": table.status}), 201


@bp.delete("/tables/<table_id>/seats/<int:seat>")
def leave_seat(table_id: str, seat: int):
    tables = current().tables
    return jsonify(tables.summary(tables.leave(table_id, seat, bearer_token(), player_id())))


# Where a new table's id leads (OpenAPI links: clients and stateful tests follow them).
TABLE_LINKS = {
    "GetTable": "getTable",
    "JoinSeat": "joinSeat",
    "GetView": "getView",
    "GetEvents": "getEvents",
    "GetReplay": "getReplay",
}

SEAT = {"name": "seat", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}

OPENAPI_SCHEMAS = {
    "Game": {
        "type": "object",
        "required": [
            "game",
            "title",
            "min_players",
            "max_players",
            "default_players",
            "bots",
            "default_config",
        ],
        "properties": {
            "game": {"type": "string"},
            "title": {"type": "string"},
            "summary": {"type": "string"},
            "min_players": {"type": "integer", "description": "fewest seats the default rules take"},
            "variant_min_players": {
                "type": "integer",
                "description": "fewest seats some config takes (Crazy Cultists: 2 with two_players, CC-2)",
            },
            "max_players": {"type": "integer"},
            "default_players": {"type": "integer"},
            "variants": {"type": "array", "items": {"type": "string"}},
            "bots": {"type": "array", "items": {"type": "string"}},
            "default_config": {"type": "object", "description": "the game's config message, every field"},
            "config_choices": {
                "type": "object",
                "description": "config fields that take names (a string or a list), with the names allowed",
                "additionalProperties": {"type": "array", "items": {"type": "string"}},
            },
            "config_limits": {
                "type": "object",
                "description": "whole-number config fields with their bounds; a table asking outside them is 400",
                "additionalProperties": {
                    "type": "object",
                    "required": ["minimum", "maximum"],
                    "properties": {"minimum": {"type": "integer"}, "maximum": {"type": "integer"}},
                },
            },
        },
    },
    "Seat": {
        "type": "object",
        "required": ["seat", "kind", "claimed", "away"],
        "properties": {
            "seat": {"type": "integer"},
            "kind": {"type": "string", "enum": ["human", "bot"]},
            "bot": {
                "type": "string",
                "nullable": True,
                "description": "the bot playing the seat now (null for a human seat)",
            },
            "stand_in": {
                "type": "string",
                "description": "the bot that acts for a human seat past its deadline",
            },
            "player": {"type": "string", "nullable": True, "description": "display name"},
            "player_id": {
                "type": "string",
                "nullable": True,
                "description": "the player the seat is bound to",
            },
            "claimed": {"type": "boolean"},
            "away": {"type": "boolean", "description": "timed out and not back yet: short deadlines"},
            "deadline": {"type": "number", "nullable": True, "description": "unix seconds"},
        },
    },
    "Table": {
        "type": "object",
        "required": ["table", "game", "players", "status", "version", "to_act", "seats"],
        "properties": {
            "table": {"type": "string"},
            "game": {"type": "string"},
            "players": {"type": "integer"},
            "config": {
                "type": "object",
                "description": "the whole config the engine plays, defaults filled in",
            },
            "rated": {"type": "boolean"},
            "source": {"type": "string", "enum": ["lobby", "matchmaking"]},
            "decision_seconds": {"type": "number"},
            "created": {"type": "number"},
            "status": {"type": "string", "enum": ["waiting", "playing", "finished"]},
            "version": {"type": "integer"},
            "to_act": {"type": "array", "items": {"type": "integer"}},
            "winners": {"type": "array", "items": {"type": "integer"}},
            "returns": {
                "type": "array",
                "items": {"type": "number"},
                "description": "once finished: each seat's final score as the engine gives it",
            },
            "scores": {
                "type": "array",
                "items": ref("SeatScore"),
                "description": "once finished: each seat's final score and its breakdown",
            },
            "replay": {"type": "string", "description": "once finished: the replay record's URL"},
            "replay_page": {"type": "string", "description": "once finished: the replay page"},
            "turn": {"type": "integer"},
            "decisions": {"type": "integer"},
            "seed_source": {
                "type": "string",
                "enum": ["server", "chosen", "mixed"],
                "description": "where the deal's seed came from: a chosen one is used as given only "
                "where at most one human sits, else mixed with a server secret",
            },
            "seats": {"type": "array", "items": ref("Seat")},
        },
    },
    "NewTable": {
        "type": "object",
        "required": ["game"],
        "properties": {
            "game": GAME_NAME,
            "players": {"type": "integer", "minimum": 1, "maximum": 64, "nullable": True},
            "config": {
                "type": "object",
                "description": "config field overrides (see the game's default_config and config_limits)",
            },
            "seats": {
                "type": "array",
                "description": "one entry per seat; default: every seat human",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": ["human", "bot"]},
                        "bot": {"type": "string", "description": "one of the game's bots"},
                    },
                },
            },
            "decision_seconds": {"type": "number", "minimum": 1, "maximum": 86400, "nullable": True},
            "seed": {
                "type": "integer",
                "minimum": 0,
                "maximum": 9223372036854775807,
                "nullable": True,
                "description": "used as given where at most one human sits; else mixed with a server secret",
            },
        },
    },
    "SeatClaim": {
        "type": "object",
        "required": ["table", "seat", "token", "status"],
        "properties": {
            "table": {"type": "string"},
            "seat": {"type": "integer"},
            "token": {"type": "string", "description": "the seat's secret; shown once, keep it"},
            "status": {"type": "string"},
        },
    },
}

OPENAPI_PATHS = {
    "/api/games": {
        "get": {
            "summary": "Games on offer, with player counts, variants, bots and config defaults",
            "responses": {
                "200": {
                    "description": "the games",
                    "content": json_content(
                        {"type": "object", "properties": {"games": {"type": "array", "items": ref("Game")}}}
                    ),
                },
                **errors(),
            },
        }
    },
    "/api/games/{game}": {
        "get": {
            "summary": "One game's facts",
            "parameters": [GAME_PARAM],
            "responses": {**ok("the game", "Game"), **errors(404)},
        }
    },
    "/api/tables": {
        "get": {
            "summary": "Tables waiting for players (or being played, to spectate)",
            "parameters": [
                {
                    "name": "status",
                    "in": "query",
                    "schema": {"type": "string", "enum": ["waiting", "playing"]},
                },
                {"name": "game", "in": "query", "schema": GAME_NAME},
            ],
            "responses": {
                "200": {
                    "description": "tables",
                    "content": json_content(
                        {"type": "object", "properties": {"tables": {"type": "array", "items": ref("Table")}}}
                    ),
                },
                **errors(400),
            },
        },
        "post": {
            "operationId": "createTable",
            "summary": "Open a table; it starts when every human seat is taken",
            "requestBody": {"required": True, "content": json_content(ref("NewTable"))},
            "responses": {
                "201": {
                    "description": "the new table",
                    "content": json_content(ref("Table")),
                    "links": {
                        name: {"operationId": op, "parameters": {"path.table_id": "$response.body#/table"}}
                        for name, op in TABLE_LINKS.items()
                    },
                },
                **errors(400, 404, 413),
            },
        },
    },
    "/api/tables/{table_id}": {
        "get": {
            "operationId": "getTable",
            "summary": "A table's seats and progress (no hidden information)",
            "parameters": [TABLE_ID],
            "responses": {**ok("the table", "Table"), **errors(404)},
        }
    },
    "/api/tables/{table_id}/seats/{seat}": {
        "post": {
            "operationId": "joinSeat",
            "summary": "Take a human seat; returns the seat's secret token once",
            "parameters": [TABLE_ID, SEAT],
            "requestBody": {
                "required": False,
                "content": json_content(
                    {"type": "object", "properties": {"player": {"type": "string", "maxLength": 64}}}
                ),
            },
            "responses": {**ok("the seat is yours", "SeatClaim", "201"), **errors(400, 404, 409, 413)},
        },
        "delete": {
            "summary": "Leave: before the start the seat is free again; during play its bot takes over",
            "parameters": [TABLE_ID, SEAT],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("the table after leaving", "Table"), **errors(401, 403, 404, 409)},
        },
    },
}
