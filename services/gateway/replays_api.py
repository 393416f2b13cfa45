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

from typing import Any

from flask import Blueprint, jsonify, request
from pydantic import Field

from .matches_api import Action, Event
from .openapi import errors, ok
from .pages import replays
from .pages.replay import ReplayQuery, SeatQuery
from .schemas import Body, openapi_components, query_parameters

bp = Blueprint("replays", __name__, url_prefix="/api/replays")


@bp.get("")
def summary():
    return jsonify(replays().get(request.args).summary())


@bp.get("/steps/<int:step>")
def step(step: int):
    replay = replays().get(request.args)
    _, seats = replay.seats_for(request.args.get("seat"))
    return jsonify(replay.step_json(step, seats))


SOURCE_PARAMS = query_parameters(ReplayQuery)

[SEAT_PARAM] = query_parameters(SeatQuery)


class ReplayMove(Body):
    step: int = Field(description="the position this move leads to (1-based)")
    seat: int
    action: int
    label: str


class ReplayView(Body):
    """A live View without the table's bookkeeping (table, version, status, deadlines)."""

    seat: int = Field(description="-1 for the public (spectator) view")
    view: dict[str, Any] = Field(description="the game's View message: what this seat may see")
    legal_actions: list[Action]
    to_act: list[int]
    terminal: bool
    winners: list[int]
    turn: int | None = None
    decisions: int | None = None


class ReplaySummary(Body):
    source: dict[str, Any] = Field(description="the query that names this replay")
    game: str
    title: str
    players: int
    seed: int
    config: dict[str, Any] = Field(description="config overrides")
    bots: list[str] | None = None
    seat_names: list[str] = []
    steps: int = Field(description="moves in the game; steps run 0..steps")
    moves: list[ReplayMove]
    terminal: bool | None = None
    winners: list[int]
    turn: int | None = None


class ReplayStep(Body):
    step: int
    steps: int
    move: ReplayMove | None = Field(description="the move that led here (null at step 0)")
    events: list[Event]
    next: ReplayMove | None = Field(description="the move made from here (null at the end)")
    views: list[ReplayView] = Field(description="one per seat asked for (`seat=all`: every seat, in order)")


OPENAPI_SCHEMAS = openapi_components(ReplaySummary, ReplayStep)

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
