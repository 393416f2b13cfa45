"""The OpenAPI 3 document: shared pieces here, each blueprint's paths beside its routes.

Every blueprint module exports `OPENAPI_PATHS` (and may export `OPENAPI_SCHEMAS`); the app
factory merges them, so a route and its documentation change in the same file, and a test
checks that every /api route in the url map appears here. `document` then makes the whole
SDK-grade: the versioned paths (`/api/v1/...`, versions.py), each operation's id, tag and
enumerated error codes (operations.py), what every write shares (the Idempotency-Key
header, a retry's 409/422, the rate limits' 429 with Retry-After and RateLimit-*), the
Location of what a POST creates, and an example on every request body.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, cast

from google.protobuf.descriptor import Descriptor

from services.engines.core.json_schema import message_schemas
from services.engines.core.messages import GameMessages

from .operations import CODES, EVERY_CODES, OPERATIONS, PATH_CODES, TAGS, WRITE_CODES
from .schemas import Error, SeatScore, openapi_components
from .versions import PREFIX, documented_path

VERSION = "1.0.0"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def json_content(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def ok(description: str, schema_name: str, status: str = "200") -> dict[str, Any]:
    return {status: {"description": description, "content": json_content(ref(schema_name))}}


def error_reply(description: str) -> dict[str, Any]:
    """One error reply in the shared `Error` shape, described in the endpoint's own words
    (the codes it can carry are added by `document`, from operations.py)."""
    return {"description": description, "content": json_content(ref("Error"))}


def errors(*statuses: int) -> dict[str, Any]:
    """Placeholders for an endpoint's error replies: `document` writes each status's reply
    from the codes operations.py lists for the operation."""
    return {}


def json_body(schema_name: str, example: Any, required: bool = True) -> dict[str, Any]:
    """A JSON request body of component `schema_name`, with an example a client can send."""
    return {
        "required": required,
        "content": {"application/json": {"schema": ref(schema_name), "example": example}},
    }


# Who may call: each entry is one way in (alternatives), the schemes inside it all needed.
# A seat taken without a session needs its token; one bound to a player (taken signed in,
# or matched from a ticket) needs its token AND that player's session.
SEAT: list[dict[str, list[str]]] = [
    {"SeatToken": []},
    {"SeatTokenHeader": []},
    {"SeatToken": [], "PlayerSession": []},
    {"SeatTokenHeader": [], "PlayerSession": []},
]
TOKEN_REQUIRED = SEAT
TOKEN_OPTIONAL: list[dict[str, list[str]]] = [{}, *SEAT]
# A matchmaking ticket is always its player's: its token and the session, both.
TICKET: list[dict[str, list[str]]] = [
    {"SeatToken": [], "PlayerSession": []},
    {"SeatTokenHeader": [], "PlayerSession": []},
]
SESSION: list[dict[str, list[str]]] = [{"PlayerSession": []}]
SESSION_OPTIONAL: list[dict[str, list[str]]] = [{}, {"PlayerSession": []}]
STREAM_TICKET: list[dict[str, list[str]]] = [{"StreamTicket": []}]

TABLE_ID = {
    "name": "table_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
}

SCHEMAS: dict[str, Any] = openapi_components(Error, SeatScore)


GAME_NAME = ref("GameName")
GAME_PARAM = {"name": "game", "in": "path", "required": True, "schema": GAME_NAME}

WRITES = ("post", "put", "patch", "delete")

HEADERS: dict[str, Any] = {
    "Retry-After": {
        "description": "seconds to wait before sending the request again",
        "schema": {"type": "integer", "minimum": 1},
    },
    "RateLimit-Limit": {
        "description": "requests the limit allows in its window (IETF httpapi rate-limit headers)",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimit-Remaining": {
        "description": "requests left in the window after this one",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimit-Reset": {
        "description": "seconds until the window resets",
        "schema": {"type": "integer", "minimum": 0},
    },
    "RateLimit-Policy": {
        "description": 'the limit as `<limit>;w=<window seconds>;comment="writes"` (or "decision": '
        "a move's tries per seat and decision)",
        "schema": {"type": "string"},
    },
    "Location": {"description": "the versioned URL of what was created", "schema": {"type": "string"}},
    "Idempotent-Replayed": {
        "description": "`true` on the kept first answer to a retried Idempotency-Key",
        "schema": {"type": "string", "enum": ["true"]},
    },
}
RATE_HEADERS = {h: {"$ref": f"#/components/headers/{h}"} for h in HEADERS if h.startswith("RateLimit-")}

IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "a unique key per write (a UUID): a retry with the same key and body within "
    "the window gets the first answer again, byte for byte, and nothing happens twice",
    "schema": {"type": "string", "minLength": 8, "maxLength": 255, "pattern": "^[\\x21-\\x7e]+$"},
}


def _header_refs(*names: str) -> dict[str, Any]:
    return {n: {"$ref": f"#/components/headers/{n}"} for n in names}


def _error_responses(method: str, codes: tuple[str, ...], given: dict[str, Any]) -> dict[str, Any]:
    """One reply per status among `codes`, its codes listed in words and in x-error-codes."""
    by_status: dict[int, list[str]] = {}
    for code in dict.fromkeys(codes):
        by_status.setdefault(CODES[code][0], []).append(code)
    out: dict[str, Any] = {}
    for status in sorted(by_status):
        listed = by_status[status]
        own = given.get(str(status), {}).get("description")
        words = "; ".join(f"`{c}`: {CODES[c][1]}" for c in listed)
        reply: dict[str, Any] = {
            "description": f"{own}. Codes: {words}" if own else f"Codes: {words}",
            "x-error-codes": listed,
            "content": {
                "application/json": {
                    "schema": ref("Error"),
                    "example": {"error": {"code": listed[0], "message": CODES[listed[0]][1]}},
                }
            },
        }
        if status in (429, 503) or (status == 409 and "idempotency_in_progress" in listed):
            reply["headers"] = _header_refs("Retry-After")
        if status == 429:
            reply["headers"].update(RATE_HEADERS)
        out[str(status)] = reply
    return out


def designers_only(paths: dict[str, Any], readable: tuple[str, ...] = ()) -> dict[str, Any]:
    """`paths` with every operation marked as the designer role's: a session of a designer
    or operator (`readable` paths also open with a signed read link)."""
    for path, ops in paths.items():
        for op in ops.values():
            op["security"] = [{"PlayerSession": []}] + ([{"ReadLink": []}] if path in readable else [])
            op["description"] = (
                "Who may call it: designers and operators (a player session of an account with the "
                "designer or operator role; anyone else gets 401 or 403)."
                + (" A signed `links.report` also opens it." if path in readable else "")
            )
    return paths


def _operation(method: str, path: str, op: dict[str, Any]) -> dict[str, Any]:
    """`op` as the document lists it (see the module docstring); KeyError for an operation
    operations.py does not name, so a new route cannot go undocumented."""
    op = copy.deepcopy(op)
    op_id, tag, codes = OPERATIONS[(method, path)]
    write = method in WRITES
    routed = "{" in path
    all_codes = (*codes, *(WRITE_CODES if write else ()), *(PATH_CODES if routed else ()), *EVERY_CODES)
    op["operationId"] = op_id
    op["tags"] = [tag]
    op.setdefault("security", [])
    given = op.get("responses", {})
    responses = {s: r for s, r in given.items() if s.startswith(("1", "2", "3"))}
    for status, reply in responses.items():
        headers = dict(reply.get("headers", {}))
        if (write and "rate_limited" in codes) or op_id == "makeMove":
            headers.update(RATE_HEADERS)
        if write and status in ("201", "202"):
            headers.update(_header_refs("Location"))
        if write:
            headers.update(_header_refs("Idempotent-Replayed"))
        if headers:
            reply["headers"] = headers
    responses.update(_error_responses(method, all_codes, given))
    op["responses"] = responses
    if write:
        op["parameters"] = [*op.get("parameters", []), {"$ref": "#/components/parameters/IdempotencyKey"}]
    return op


def error_code_schema() -> dict[str, Any]:
    return {
        "type": "string",
        "enum": sorted(CODES),
        "description": "what went wrong, for programs (each operation lists the codes it answers; "
        "new codes may appear within v1: read an unknown one by its HTTP status)",
    }


def game_schemas(games: list[GameMessages]) -> dict[str, Any]:
    """Each game's View and ActionDetail (and the messages they hold) as components, read
    from the protobuf descriptors, and `GameView` / `GameActionDetail`: one of them, by
    game (the games' schemas admit no key but their own, so exactly one matches)."""
    out: dict[str, Any] = {}
    views: list[dict[str, str]] = []
    details: list[dict[str, str]] = []
    for found in games:
        for message, refs in ((found.view, views), (found.action, details)):
            out.update(message_schemas(cast(Descriptor, message.DESCRIPTOR)))  # (or upb's: the same)
            refs.append(ref(message.DESCRIPTOR.name))
    out["GameView"] = {"oneOf": views} if views else {"type": "object"}
    out["GameView"]["description"] = "what one seat (or a spectator) may see: the game's View message"
    out["GameActionDetail"] = {"oneOf": details} if details else {"type": "object"}
    out["GameActionDetail"]["description"] = "an action in structured form: the game's ActionDetail message"
    return out


# The platform's own events, the same at every game's tables, and their payloads.
PLATFORM_EVENTS: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "created": ({"game": {"type": "string"}, "players": {"type": "integer"}}, ("game", "players")),
    "joined": ({"player": {"type": "string"}, "player_id": {"type": "string"}}, ()),
    "left": ({}, ()),
    "timeout": (
        {"bot": {"type": "string"}, "action": {"type": "integer"}, "label": {"type": "string"}},
        ("bot", "action", "label"),
    ),
}


def _kind(kind: str, properties: dict[str, Any], always: tuple[str, ...]) -> dict[str, Any]:
    """One kind of event: its `kind`, and a payload of exactly these fields."""
    payload: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if always:
        payload["required"] = list(always)
    return {
        "type": "object",
        "required": ["kind", "payload"],
        "properties": {"kind": {"type": "string", "enum": [kind]}, "payload": payload},
    }


def event_schemas(games: list[str], messages: list[GameMessages]) -> dict[str, Any]:
    """Each game's events typed by kind, from its EventPayload message: `<Game>Event` is a
    log entry (`LogEvent`) that is one of the game's kinds (or the platform's), each
    kind's payload holding exactly the fields the game's proto.py lists for it (its
    `always` ones required); and `Events`, a page of the log, one of the games' pages by
    `game`. The kinds of one game are distinct, so exactly one alternative matches an
    event (the games share some kinds' names: which game's it is, a `game` beside says)."""
    out: dict[str, Any] = {}
    pages = []
    for game, found in zip(games, messages, strict=True):
        if found.event is None:
            continue
        payload = message_schemas(cast(Descriptor, found.event.DESCRIPTOR))  # (or upb's: the same)
        out.update(payload)
        fields = payload[found.event.DESCRIPTOR.name]["properties"]
        kinds = [
            _kind(k, {f: fields[f] for f in (*e.always, *e.sometimes)}, e.always)
            for k, e in found.events.items()
        ]
        kinds += [_kind(k, props, always) for k, (props, always) in PLATFORM_EVENTS.items()]
        name = found.event.DESCRIPTOR.name.removesuffix("EventPayload") + "Event"
        out[name] = {
            "description": f"a log entry of a {game} table, its payload typed by its kind",
            "allOf": [ref("LogEvent"), {"oneOf": kinds}],
        }
        pages.append(
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["game", "events", "last", "more"],
                "properties": {
                    "game": {"type": "string", "enum": [game]},
                    "events": {"type": "array", "items": ref(name)},
                    "last": {"type": "integer", "description": "the id to pass as `after` for the next page"},
                    "more": {"type": "boolean", "description": "more events follow this page"},
                },
            }
        )
    if pages:
        out["Events"] = {"description": "a page of a table's log, typed by the table's game", "oneOf": pages}
    return out


def events_by_game(base: dict[str, Any], games: dict[str, str], always: bool) -> dict[str, Any]:
    """`base` (an object with `game` and `events`) with its events typed by its `game`:
    all of `base`, and one of the games' alternatives (the game named, its `events` of its
    `<Game>Event`). Exactly one matches, as the games differ; a generated client keeps one
    model with `base`'s fields. `always`: `base` always carries its events."""
    alternatives = []
    for game, name in games.items():
        alternative: dict[str, Any] = {
            "type": "object",
            "required": ["game", "events"] if always else ["game"],
            "properties": {
                "game": {"type": "string", "enum": [game]},
                "events": {"type": "array", "items": ref(name)},
            },
        }
        alternatives.append(alternative)
    plain = {k: v for k, v in base.items() if k != "description"}
    return {"description": base.get("description", ""), "allOf": [plain, {"oneOf": alternatives}]}


def typed_events(components: dict[str, Any], games: list[str], messages: list[GameMessages]) -> None:
    """Every place the API sends log entries besides a page types them as a page does, by
    the `game` beside them: a move's answer (`MoveResult`) and a stream's state and updates
    (`StreamState`, whose updates carry `events`)."""
    names = {
        game: found.event.DESCRIPTOR.name.removesuffix("EventPayload") + "Event"
        for game, found in zip(games, messages, strict=True)
        if found.event is not None
    }
    if not names:
        return
    for schema, always in (("MoveResult", True), ("StreamState", False)):
        if schema in components:
            components[schema] = events_by_game(components[schema], names, always)


def document(
    paths: dict[str, Any],
    schemas: dict[str, Any],
    games: list[str],
    messages: Callable[[str], GameMessages] | None = None,
) -> dict[str, Any]:
    """The whole document; `games` are the names this gateway serves (an enum, so clients
    and generated tests know them), `messages` their protobuf messages (for the game data's
    schemas)."""
    game_name = {"type": "string", "enum": games} if games else {"type": "string"}
    versioned = {
        documented_path(path): {m: _operation(m, path, op) for m, op in ops.items()}
        for path, ops in paths.items()
    }
    found = [messages(g) for g in games] if messages is not None else []
    typed = game_schemas(found)
    components = {**SCHEMAS, "GameName": game_name, "ErrorCode": error_code_schema(), **typed, **schemas}
    components.update(event_schemas(games, found))  # over the untyped `Events` of matches_api
    typed_events(components, games, found)
    components["ErrorDetail"] = copy.deepcopy(components["ErrorDetail"])
    components["ErrorDetail"]["properties"]["code"] = ref("ErrorCode")
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "Cultists gateway",
            "version": VERSION,
            "description": (
                "Lobby, tables, seats, matchmaking and the match API for Crazy Cultists, "
                f"Trash Cult and Tricky Cultists, under `{PREFIX}` (docs/client-guide.md: the "
                "client loop, the stream, errors and retries, and the deprecation policy). Errors "
                'are `{"error": {"code", "message"}}`, each operation listing its codes.'
            ),
        },
        "tags": TAGS,
        "paths": versioned,
        "components": {
            "schemas": components,
            "headers": HEADERS,
            "parameters": {"IdempotencyKey": IDEMPOTENCY_KEY},
            "securitySchemes": {
                "SeatToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "a seat's (or matchmaking ticket's) token",
                },
                "SeatTokenHeader": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Seat-Token",
                    "description": "the same token, in its own header",
                },
                "PlayerSession": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Player-Token",
                    "description": "a player session; a seat or ticket bound to a player needs it too",
                },
                "ReadLink": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "read",
                    "description": "a signed link to one sweep's or tune's report (its `links.report`)",
                },
                "StreamTicket": {
                    "type": "apiKey",
                    "in": "query",
                    "name": "ticket",
                    "description": "a single-use stream ticket (POST .../stream-ticket), for EventSource",
                },
            },
        },
    }
