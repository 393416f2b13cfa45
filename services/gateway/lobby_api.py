"""Lobby: the games on offer, opening tables, listing open ones, taking and leaving seats."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

from flask import Blueprint, jsonify, request
from pydantic import ConfigDict, Field

from services.engines.core.bots import bot_names
from services.engines.core.game import GameSpec
from services.engines.registry import available_games, load_game
from services.gateway.context import current
from services.models import MAX_BOT_SPEC
from services.platform.errors import PlatformError
from services.platform.settings import Settings
from services.platform.store import TablePage, TableStore

from .auth import current_player, player_id
from .errors import bearer_token
from .openapi import (
    GAME_PARAM,
    SESSION,
    SESSION_OPTIONAL,
    TABLE_ID,
    TOKEN_REQUIRED,
    errors,
    json_body,
    json_content,
    ok,
    ref,
)
from .schemas import (
    Body,
    DisplayName,
    GameName,
    SeatScore,
    openapi_components,
    parse_body,
    query_parameters,
    validate,
)
from .table_configs import check_table_config, config_name, config_schema, seat_bounds, size_rules
from .versions import created

bp = Blueprint("lobby", __name__, url_prefix="/api")

TABLE_LIST_LIMIT = 200
SEED_MAX = 2**63 - 1

BotName = Annotated[
    str, Field(min_length=1, max_length=MAX_BOT_SPEC, description="a bot, with parameters (bounds.py)")
]


class SeatSpec(Body):
    kind: Literal["human", "bot"] = "human"
    bot: BotName | None = Field(None, description="the bot of a bot seat; default random")


SEATS_MIN, SEATS_MAX = seat_bounds()


class NewTable(Body):
    """Open a table. Every field but `game` may be left out or null: the default."""

    game: GameName
    players: int | None = Field(
        None, ge=SEATS_MIN, le=SEATS_MAX, description="default: the seats listed, else the game's"
    )
    config: dict[str, Any] | None = Field(
        None, description="config field overrides (see the game's default_config and config_limits)"
    )
    seats: list[SeatSpec] | None = Field(
        None,
        min_length=SEATS_MIN,
        max_length=SEATS_MAX,
        description="one entry per seat; default: every seat human",
    )
    decision_seconds: float | None = Field(
        None,
        ge=Settings.min_decision_seconds,
        le=Settings.max_decision_seconds,
        description="a human seat's time per decision; default: the gateway's "
        f"(GATEWAY_DECISION_SECONDS, {Settings.decision_seconds:g} unless set)",
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=SEED_MAX,
        description="used as given where at most one human sits; else mixed with a server secret",
    )


class JoinSeat(Body):
    player: DisplayName | None = Field(None, description="name shown at the table; default: the player's")


# A place in a lobby list: a table's listing score and its id (store.TablePage).
Cursor = Annotated[
    str,
    Field(max_length=64, pattern=r"^<?[0-9]+(\.[0-9]+)?(e[+-]?[0-9]+)?:[0-9a-f]{16}$"),
]
# A page's `previous` is the place of its first table marked with this: one `cursor`
# parameter walks both ways, so no two parameters exclude each other (a rule the OpenAPI
# document could not state, and a schema-valid request the API would refuse).
BACK = "<"


class TableQuery(Body):
    model_config = ConfigDict(strict=False, extra="forbid")  # query strings are text

    status: Literal["waiting", "playing"] = Field(
        "waiting", description="waiting: to join; playing: to watch"
    )
    game: GameName | None = None
    limit: int = Field(50, ge=1, le=TABLE_LIST_LIMIT, description="tables in one page, newest first")
    cursor: Cursor | None = Field(
        None, description="`next` of the page before (the page after it), or `previous` of the page after"
    )


@bp.get("/games")
def list_games():
    gw = current()
    return jsonify({"games": [gw.engines.description_json(g) for g in gw.engines.games]})


@bp.get("/games/<game>")
def get_game(game: str):
    return jsonify(current().engines.description_json(game))


@bp.get("/tables")
def list_tables():
    query = validate(TableQuery, request.args.to_dict())
    gw = current()
    if query.game is not None:
        gw.engines.require(query.game)
    page, previous = page_at(gw.store, query.status, query.limit, query.cursor, query.game)
    return jsonify(
        {
            "tables": [gw.tables.summary(t) for t in page.tables],
            "next": page.next,
            "previous": previous,
            "total": page.total,
        }
    )


def page_at(
    store: TableStore, status: str, limit: int, cursor: str | None, game: str | None = None
) -> tuple[TablePage, str | None]:
    """The page a `cursor` names (a `next`, or a `previous` marked with BACK), and the
    cursor of the page before it: the one paging read of the API and the lobby page."""
    if cursor is not None and cursor.startswith(BACK):
        after, before = None, cursor[len(BACK) :]
    else:
        after, before = cursor, None
    page = store.page(status, limit, after, game, before=before)
    return page, (BACK + page.previous if page.previous else None)


def opener_kind() -> str:
    """Who opens a table, as the platform prices its bots (bounds.check_table_bots)."""
    signed_in = current_player()
    if signed_in is None:
        return "anonymous"
    return "guest" if signed_in.kind == "guest" else "account"


@bp.post("/tables")
def create_table():
    """Anyone; one player (or, unsigned, one address) holds at most `max_waiting_tables`
    waiting tables at once (table_caps.py)."""
    gw = current()
    body = parse_body(NewTable)
    gw.engines.require(body.game)
    config = check_table_config(body.game, body.config) if body.config else {}
    signed_in = player_id()
    owner = f"p:{signed_in}" if signed_in else f"a:{request.remote_addr}"
    gw.waiting_cap.check(owner)
    seats = body.seats
    bots = None if seats is None else [None if s.kind == "human" else s.bot or "random" for s in seats]
    decision = body.decision_seconds if body.decision_seconds is not None else gw.settings.decision_seconds
    table = gw.tables.open_table(
        body.game, body.players, config, bots, decision, seed=body.seed, opened_by=opener_kind()
    )
    assert table is not None  # only a watched (matchmaking) open can fail
    if table.status == "waiting":
        gw.waiting_cap.note(owner, table.id)
    return created(gw.tables.summary(table), f"/api/tables/{table.id}")


@bp.get("/tables/<table_id>")
def get_table(table_id: str):
    tables = current().tables
    return jsonify(tables.summary(tables.get(table_id)))


@bp.post("/tables/<table_id>/seats/<int:seat>")
def join_seat(table_id: str, seat: int):
    body = parse_body(JoinSeat, optional=True)
    signed_in = current_player()
    # The name shown at the table: the body's, else the signed-in player's display name.
    player = body.player or (signed_in.name if signed_in else None)
    table, token = current().tables.join(table_id, seat, player, signed_in.id if signed_in else None)
    claim = {"table": table.id, "seat": seat, "token": token, "status": table.status}
    return created(claim, f"/api/tables/{table.id}/seats/{seat}")


@bp.get("/tables/<table_id>/seats/<int:seat>")
def get_seat(table_id: str, seat: int):
    table = current().tables.get(table_id)
    if not 0 <= seat < table.players:
        raise PlatformError(404, "unknown_seat", f"table {table_id} has seats 0-{table.players - 1}")
    return jsonify(table.seats[seat].public())


@bp.post("/tables/<table_id>/seats/<int:seat>/token")
def reissue_token(table_id: str, seat: int):
    """A seat's signed-in player gets a new token for it (a lost join answer, a lost
    token); the old one stops working."""
    table, token = current().tables.reissue(table_id, seat, player_id())
    return jsonify({"table": table.id, "seat": seat, "token": token, "status": table.status})


@bp.delete("/tables/<table_id>/seats/<int:seat>")
def leave_seat(table_id: str, seat: int):
    tables = current().tables
    return jsonify(tables.summary(tables.leave(table_id, seat, bearer_token(), player_id())))


# Where a new table's id leads (OpenAPI links: clients and stateful tests follow them).
TABLE_LINKS = {
    "GetTable": "getTable",
    "JoinSeat": "joinSeat",
    "GetView": "getView",
    "GetEvents": "listTableEvents",
    "GetReplay": "getReplay",
}

SEAT = {"name": "seat", "in": "path", "required": True, "schema": {"type": "integer", "minimum": 0}}


class ConfigLimit(Body):
    minimum: int
    maximum: int


class Game(Body):
    """One game's facts: player counts, variants, bots, config defaults and bounds."""

    game: str
    title: str
    summary: str | None = None
    min_players: int = Field(description="fewest seats the default rules take")
    variant_min_players: int | None = Field(
        None, description="fewest seats some config takes (Crazy Cultists: 2 with two_players, CC-2)"
    )
    max_players: int
    default_players: int
    variants: list[str] = []
    bots: list[str]
    default_config: dict[str, Any] = Field(description="the game's config message, every field")
    config_choices: dict[str, list[str]] = Field(
        {}, description="config fields that take names (a string or a list), with the names allowed"
    )
    config_limits: dict[str, ConfigLimit] = Field(
        {}, description="whole-number config fields with their bounds; a table asking outside them is 400"
    )


class Games(Body):
    games: list[Game]


class Seat(Body):
    seat: int
    kind: Literal["human", "bot"]
    bot: str | None = Field(None, description="the bot playing the seat now (null for a human seat)")
    stand_in: str | None = Field(None, description="the bot that acts for a human seat past its deadline")
    player: str | None = Field(None, description="display name")
    player_id: str | None = Field(None, description="the player the seat is bound to")
    claimed: bool
    away: bool = Field(description="timed out and not back yet: short deadlines")
    deadline: float | None = Field(None, description="unix seconds")


class Table(Body):
    """A table as anyone may see it: seats and progress, no hidden information."""

    table: str
    game: str
    players: int
    config: dict[str, Any] | None = Field(
        None, description="the whole config the engine plays, defaults filled in"
    )
    rated: bool | None = None
    source: Literal["lobby", "matchmaking"] | None = None
    decision_seconds: float | None = None
    created: float | None = None
    status: Literal["waiting", "playing", "finished"]
    version: int
    to_act: list[int]
    winners: list[int] = []
    returns: list[float] | None = Field(
        None, description="once finished: the engine's result per seat (1 won, 0 lost, a draw shared)"
    )
    scores: list[SeatScore] | None = Field(
        None, description="once finished: each seat's final score and its breakdown"
    )
    replay: str | None = Field(None, description="once finished: the replay record's URL")
    replay_page: str | None = Field(None, description="once finished: the replay page")
    turn: int | None = None
    decisions: int | None = None
    seed_source: Literal["server", "chosen", "mixed"] | None = Field(
        None,
        description="where the deal's seed came from: a chosen one is used as given only "
        "where at most one human sits, else mixed with a server secret",
    )
    seats: list[Seat]


class Tables(Body):
    tables: list[Table]
    next: str | None = Field(description="the `cursor` of the next page; null on the last")
    previous: str | None = Field(None, description="the `cursor` of the previous page; null on the first")
    total: int = Field(description="how many tables there are in this status (and game)")


class SeatClaim(Body):
    table: str
    seat: int
    token: str = Field(description="the seat's secret; shown once, keep it")
    status: str


def _lowering_switches(spec: GameSpec) -> dict[int, str]:
    """Table sizes below the usual rules' fewest that a yes/no config field allows, and the
    field (Crazy Cultists: 2 players with `two_players`, CC-2)."""
    usual = spec.make_config()
    least = spec.min_players_for(usual)
    out: dict[int, str] = {}
    for field in dataclasses.fields(usual):
        if isinstance(getattr(usual, field.name), bool):
            fewer = spec.min_players_for(dataclasses.replace(usual, **{field.name: True}))
            out.update({n: field.name for n in range(fewer, least)})
    return out


def tables_by_game(games: list[str]) -> list[dict[str, Any]]:
    """One alternative of `NewTable` per game, read from each engine's own spec (one
    source of truth): the game named, its `config` the game's own (`<Game>TableConfig`,
    table_configs.py), and any of one alternative per table size: `players` that size (or
    left out), `seats` that many, each bot one of the game's, and what the size asks of
    the config (a list per seat; a switch, for a size only it allows). A size other than
    the default says itself (by `players` or `seats`). So a schema-valid request names a
    table the game takes, as the fuzzer checks. The config is stated once per game, not
    per size: the same bounds, and a fuzzer covers each of them once.
    (`null` is in each nullable enum: OpenAPI 3.0 validates a null against the enum too.)"""
    out: list[dict[str, Any]] = []
    for game in games:
        spec = load_game(game)
        seat = {  # a human seat's `bot` is ignored; a bot seat's is one of the game's
            "anyOf": [
                {"type": "object", "properties": {"kind": {"type": "string", "enum": ["human"]}}},
                {
                    "type": "object",
                    "required": ["kind"],
                    "properties": {
                        "kind": {"type": "string", "enum": ["bot"]},
                        "bot": {"type": "string", "enum": [*bot_names(spec), None], "nullable": True},
                    },
                },
            ]
        }
        switches = _lowering_switches(spec)
        sizes: list[dict[str, Any]] = []
        for n in range(spec.min_players, spec.max_players + 1):
            if n < spec.min_players_for(spec.make_config()) and n not in switches:
                continue
            size: dict[str, Any] = {
                "type": "object",
                "properties": {
                    "players": {"type": "integer", "enum": [n, None], "nullable": True},
                    "seats": {"type": "array", "minItems": n, "maxItems": n, "items": seat, "nullable": True},
                },
            }
            config: dict[str, Any] = {"type": "object", "properties": size_rules(game, n)}
            if n in switches:  # the switch: a config that is there (not null), with it on
                size["required"] = ["config"]
                config["required"] = [switches[n]]
                config["properties"][switches[n]] = {"type": "boolean", "enum": [True]}
            elif config["properties"]:
                config["nullable"] = True
            if config["properties"]:
                size["properties"]["config"] = config
            if n != spec.default_players:  # the size said (by `players` or by `seats`)
                size["anyOf"] = [
                    {"required": ["players"], "properties": {"players": {"type": "integer"}}},
                    {"required": ["seats"], "properties": {"seats": {"type": "array"}}},
                ]
            sizes.append(size)
        own = {
            "type": "object",
            "required": ["game"],
            "properties": {
                "game": {"type": "string", "enum": [game]},
                "config": {"allOf": [ref(config_name(game))], "nullable": True},
            },
        }
        out.append({"allOf": [own, {"anyOf": sizes}]})
    return out


OPENAPI_SCHEMAS = openapi_components(NewTable, JoinSeat, Games, Tables, SeatClaim, Seat)
OPENAPI_SCHEMAS.update({config_name(g): config_schema(g) for g in available_games()})
OPENAPI_SCHEMAS["NewTable"] = {
    "description": OPENAPI_SCHEMAS["NewTable"].get("description", ""),
    "allOf": [
        {k: v for k, v in OPENAPI_SCHEMAS["NewTable"].items() if k != "description"},
        {"anyOf": tables_by_game(available_games())},
    ],
}

OPENAPI_PATHS = {
    "/api/games": {
        "get": {
            "summary": "Games on offer, with player counts, variants, bots and config defaults",
            "responses": {**ok("the games", "Games"), **errors()},
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
            "parameters": query_parameters(TableQuery),
            "responses": {**ok("tables", "Tables"), **errors(400)},
        },
        "post": {
            "operationId": "createTable",
            "summary": "Open a table; it starts when every human seat is taken",
            "requestBody": json_body(
                "NewTable",
                {
                    "game": "trash_cult",
                    "players": 3,
                    "seats": [{"kind": "human"}, {"kind": "human"}, {"kind": "bot", "bot": "heuristic"}],
                    "decision_seconds": 60,
                },
            ),
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
            "security": SESSION_OPTIONAL,
            "requestBody": json_body("JoinSeat", {"player": "Ada"}, required=False),
            "responses": {**ok("the seat is yours", "SeatClaim", "201"), **errors(400, 404, 409, 413)},
        },
        "get": {
            "summary": "One seat as anyone may see it (kind, player, claimed, deadline)",
            "parameters": [TABLE_ID, SEAT],
            "responses": {**ok("the seat", "Seat"), **errors(404)},
        },
        "delete": {
            "summary": "Leave: before the start the seat is free again; during play its bot takes over",
            "parameters": [TABLE_ID, SEAT],
            "security": TOKEN_REQUIRED,
            "responses": {**ok("the table after leaving", "Table"), **errors(401, 403, 404, 409)},
        },
    },
    "/api/tables/{table_id}/seats/{seat}/token": {
        "post": {
            "summary": "A new token for a seat your player holds (a lost join answer or token); "
            "the old one stops working",
            "parameters": [TABLE_ID, SEAT],
            "security": SESSION,
            "responses": {**ok("the seat's new token", "SeatClaim"), **errors(401, 403, 404, 409)},
        }
    },
}
