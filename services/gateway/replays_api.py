"""Replays as JSON: a finished table or a sweep's game, rebuilt in-process, step by step.

The replay page renders the same steps as HTML (`services/gateway/pages`); this API gives
them to any other client (and to the browser tests, which check the page against it). A
replay is named by query parameters, exactly as the page's URL names it:

- `?table=<id>`: a finished table (its replay record, `GET /api/tables/{id}/replay`);
- `?game=..&players=..&seed=..&config=<overrides JSON>&bots=<line-up>`: a sweep's game,
  played again with `play_game` (sweep reports link the page with these).

Each view is the live match API's view shape (`seat`, `view`, `legal_actions`, `to_act`,
`terminal`, `winners`...), so a client renders live and replayed positions alike.
"""

from __future__ import annotations

from flask import Blueprint, jsonify, request

from .matches_api import OPENAPI_SCHEMAS as MATCH_SCHEMAS
from .openapi import GAME_NAME, errors, ok, ref
from .pages import replays

bp = Blueprint("replays", __name__, url_prefix="/api/replays")


@bp.get("")
def summary():
    return jsonify(replays().get(request.args).summary())


@bp.get("/steps/<int:step>")
def step(step: int):
    replay = replays().get(request.args)
    _, seats = replay.seats_for(request.args.get("seat"))
    return jsonify(replay.step_json(step, seats))


SOURCE_PARAMS = [
    {
        "name": "table",
        "in": "query",
        "description": "a finished table's id (instead of game + seed)",
        "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
    },
    {"name": "game", "in": "query", "description": "with `seed`: a sweep's game", "schema": GAME_NAME},
    {
        "name": "players",
        "in": "query",
        "description": "seats (default: the game's default)",
        "schema": {"type": "integer", "minimum": 1, "maximum": 64},
    },
    {
        "name": "seed",
        "in": "query",
        "schema": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615},
    },
    {
        "name": "config",
        "in": "query",
        "description": "config overrides as a JSON object",
        "schema": {"type": "string", "maxLength": 4096},
    },
    {
        "name": "bots",
        "in": "query",
        "description": "one bot for every seat, or one per seat (`,` or `;` between seats)",
        "schema": {"type": "string", "maxLength": 1024},
    },
]

SEAT_PARAM = {
    "name": "seat",
    "in": "query",
    "description": "a seat, -1 for a spectator, or `all` for every seat's view (all cards open)",
    "schema": {"type": "string", "pattern": "^(all|-1|[0-9]{1,2})$"},
}

MOVE = {
    "type": "object",
    "required": ["step", "seat", "action", "label"],
    "properties": {
        "step": {"type": "integer", "description": "the position this move leads to (1-based)"},
        "seat": {"type": "integer"},
        "action": {"type": "integer"},
        "label": {"type": "string"},
    },
}

_LIVE_VIEW = MATCH_SCHEMAS["View"]
_BOOKKEEPING = ("table", "version", "status", "deadlines")

OPENAPI_SCHEMAS = {
    "ReplayMove": MOVE,
    # A replay step is what a live View holds, without the table's bookkeeping.
    "ReplayView": {
        "type": "object",
        "required": [*(r for r in _LIVE_VIEW["required"] if r not in _BOOKKEEPING), "winners"],
        "description": "a live View without the table's bookkeeping (table, version, deadlines)",
        "properties": {k: v for k, v in _LIVE_VIEW["properties"].items() if k not in _BOOKKEEPING},
    },
    "ReplaySummary": {
        "type": "object",
        "required": ["source", "game", "title", "players", "seed", "config", "steps", "moves", "winners"],
        "properties": {
            "source": {"type": "object", "description": "the query that names this replay"},
            "game": {"type": "string"},
            "title": {"type": "string"},
            "players": {"type": "integer"},
            "seed": {"type": "integer"},
            "config": {"type": "object", "description": "config overrides"},
            "bots": {"type": "array", "items": {"type": "string"}, "nullable": True},
            "seat_names": {"type": "array", "items": {"type": "string"}},
            "steps": {"type": "integer", "description": "moves in the game; steps run 0..steps"},
            "moves": {"type": "array", "items": ref("ReplayMove")},
            "terminal": {"type": "boolean"},
            "winners": {"type": "array", "items": {"type": "integer"}},
            "turn": {"type": "integer"},
        },
    },
    "ReplayStep": {
        "type": "object",
        "required": ["step", "steps", "move", "events", "next", "views"],
        "properties": {
            "step": {"type": "integer"},
            "steps": {"type": "integer"},
            "move": {**MOVE, "nullable": True, "description": "the move that led here (null at step 0)"},
            "events": {"type": "array", "items": ref("Event")},
            "next": {**MOVE, "nullable": True, "description": "the move made from here (null at the end)"},
            "views": {
                "type": "array",
                "items": ref("ReplayView"),
                "description": "one per seat asked for (`seat=all`: every seat, in order)",
            },
        },
    },
}

OPENAPI_PATHS = {
    "/api/replays": {
        "get": {
            "summary": "A finished table or a sweep's game, rebuilt: its moves, in words, and the result",
            "parameters": SOURCE_PARAMS,
            "responses": {**ok("the replay", "ReplaySummary"), **errors(400, 404, 409)},
        }
    },
    "/api/replays/steps/{step}": {
        "get": {
            "summary": "One step of a replay: the move that led there, its events, and seat views",
            "parameters": [
                {
                    "name": "step",
                    "in": "path",
                    "required": True,
                    "description": "0: the deal; n: after n moves",
                    "schema": {"type": "integer", "minimum": 0},
                },
                *SOURCE_PARAMS,
                SEAT_PARAM,
            ],
            "responses": {**ok("the step", "ReplayStep"), **errors(400, 404, 409)},
        }
    },
}
