"""Every refusal has the right status and JSON shape, and changes nothing: the table's
version, state and log are the same after it as before."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from services.engines.registry import available_games
from services.gateway import create_app
from services.gateway.matches_api import LAST_EVENT_ID
from services.gateway.versions import documented_path
from services.platform.keys import log_key, table_key
from services.runtime.ports import free_port
from tests.support.staff import session_of

from .conftest import bearer
from .support import two_player_config

GAME = available_games()[0]
TWO = two_player_config(GAME)  # its tables here seat 2


@pytest.fixture()
def started(client):
    """A two-human table, started, with both tokens and the seat that must act."""
    table = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seed": 3}).get_json()
    tid = table["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    public = client.get(f"/api/tables/{tid}/view").get_json()
    seat = public["to_act"][0]
    return tid, tokens, seat


def snapshot(app, tid: str):
    redis = app.extensions["cultists"].redis
    return redis.hmget(table_key(tid), "version", "state", "to_act"), redis.llen(log_key(tid))


def expect(response, status: int, code: str | None = None) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    assert set(body) == {"error"} and body["error"]["message"]
    if code is not None:
        assert body["error"]["code"] == code
    return body["error"]


def test_refusals_change_nothing(client, app, started):
    tid, tokens, seat = started
    other = 1 - seat
    view = client.get(f"/api/tables/{tid}/view", headers=bearer(tokens[seat])).get_json()
    good = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
    before = snapshot(app, tid)
    url = f"/api/tables/{tid}/actions"

    expect(client.post(url, json=good), 401, "token_required")
    expect(client.post(url, json=good, headers=bearer("not-a-token")), 403, "wrong_token")
    expect(client.post(url, json=good, headers={"X-Seat-Token": "nope"}), 403, "wrong_token")
    # a token of another table holds no seat here
    elsewhere = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()[
        "table"
    ]
    foreign = client.post(f"/api/tables/{elsewhere}/seats/0").get_json()["token"]
    expect(client.post(url, json=good, headers=bearer(foreign)), 403, "wrong_token")
    # a spectator cannot act: without a seat token there is no seat to act for
    expect(client.get(f"/api/tables/{tid}/legal"), 401, "token_required")
    # the seat that is not asked, and an action that is not legal: the engine says no
    idle = client.post(url, json=good, headers=bearer(tokens[other]))
    if other not in view["to_act"]:
        assert "not asked" in expect(idle, 400, "illegal_action")["message"]
    illegal = {"action": max(a["id"] for a in view["legal_actions"]) + 100_000, "version": view["version"]}
    assert "not legal" in expect(client.post(url, json=illegal, headers=bearer(tokens[seat])), 400)["message"]
    # stale version
    stale = expect(client.post(url, json={**good, "version": 7}, headers=bearer(tokens[seat])), 409)
    assert stale["code"] == "stale_version" and stale["version"] == view["version"]
    # malformed bodies
    headers = bearer(tokens[seat])
    expect(
        client.post(url, data="{not json", headers=headers, content_type="application/json"), 400, "malformed"
    )
    expect(client.post(url, data="action=1", headers=headers), 400, "malformed")
    expect(client.post(url, json=[1, 2], headers=headers), 400, "malformed")
    expect(client.post(url, json={"action": "1", "version": 0}, headers=headers), 400, "malformed")
    expect(client.post(url, json={"action": True, "version": 0}, headers=headers), 400, "malformed")
    expect(client.post(url, json={"action": -1, "version": 0}, headers=headers), 400, "malformed")
    expect(client.post(url, json={"version": 0}, headers=headers), 400, "malformed")
    # too large
    big = {"action": 1, "version": 0, "pad": "x" * (app.config["MAX_CONTENT_LENGTH"] + 1)}
    expect(client.post(url, json=big, headers=headers), 413)
    # unknown table, seat, game, ticket
    expect(
        client.post("/api/tables/0123456789abcdef/actions", json=good, headers=headers), 404, "unknown_table"
    )
    expect(client.get("/api/tables/nonsense/view"), 404, "unknown_table")
    expect(client.post(f"/api/tables/{tid}/seats/9"), 404)
    expect(client.get("/api/games/chess"), 404, "unknown_game")
    expect(client.get("/api/nothing/here"), 404)
    expect(client.put(url, json=good), 405)
    # seats of a started table cannot be taken; a wrong token cannot leave for a seat
    expect(client.post(f"/api/tables/{tid}/seats/0"), 409, "not_waiting")
    expect(client.delete(f"/api/tables/{tid}/seats/{seat}", headers=bearer(tokens[other])), 403)
    # the view with a wrong token is refused, not silently downgraded to the public one
    expect(client.get(f"/api/tables/{tid}/view", headers=bearer("nope")), 403, "wrong_token")
    # the replay is given only after the end
    expect(client.get(f"/api/tables/{tid}/replay"), 409, "not_finished")

    assert snapshot(app, tid) == before
    ok = client.post(url, json=good, headers=bearer(tokens[seat]))
    assert ok.status_code == 200 and ok.get_json()["version"] == view["version"] + 1


def test_table_creation_refusals(client, app):
    expect(client.post("/api/tables", json={}), 400, "malformed")
    expect(client.post("/api/tables", json={"game": "chess"}), 404, "unknown_game")
    # Past every game's seats: the schema's bound (the document's); within it, the game's own.
    expect(client.post("/api/tables", json={"game": GAME, "players": 50}), 400, "malformed")
    expect(client.post("/api/tables", json={"game": "tricky_cultists", "players": 5}), 400, "invalid_players")
    expect(client.post("/api/tables", json={"game": GAME, "config": {"no_such_field": 1}}), 400)
    expect(client.post("/api/tables", json={"game": GAME, "config": []}), 400, "malformed")
    expect(client.post("/api/tables", json={"game": GAME, "seats": [{"kind": "alien"}]}), 400)
    expect(
        client.post("/api/tables", json={"game": GAME, "seats": [{"kind": "bot", "bot": "nobody"}] * 2}),
        400,
        "unknown_bot",
    )
    expect(client.post("/api/tables", json={"game": GAME, "decision_seconds": 0}), 400, "malformed")
    # CC-2: 2-player Crazy Cultists only with the sweep variant's switch, refused in words.
    two = expect(
        client.post("/api/tables", json={"game": "crazy_cultists", "players": 2}), 400, "invalid_argument"
    )
    assert "3-6 players" in two["message"] and "two_players=true" in two["message"]
    crazy = client.get("/api/games/crazy_cultists").get_json()  # the lobby offers 3-6
    assert (crazy["min_players"], crazy["variant_min_players"], crazy["max_players"]) == (3, 2, 6)
    listed = {g["game"]: g for g in client.get("/api/games").get_json()["games"]}
    assert listed["crazy_cultists"]["min_players"] == 3
    assert all(
        g["variant_min_players"] == g["min_players"] for n, g in listed.items() if n != "crazy_cultists"
    )
    assert client.get("/api/tables").get_json()["total"] == 0, "nothing was opened"


def test_join_and_leave(client):
    table = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()
    tid = table["table"]
    token = client.post(f"/api/tables/{tid}/seats/0", json={"player": "ann"}).get_json()["token"]
    assert [t["table"] for t in client.get("/api/tables").get_json()["tables"]] == [tid]
    expect(client.post(f"/api/tables/{tid}/seats/0"), 409, "seat_taken")
    expect(client.delete(f"/api/tables/{tid}/seats/0"), 401, "token_required")
    left = client.delete(f"/api/tables/{tid}/seats/0", headers=bearer(token))
    assert left.status_code == 200 and not left.get_json()["seats"][0]["claimed"]
    expect(client.get(f"/api/tables/{tid}/legal", headers=bearer(token)), 403, "wrong_token")
    again = client.post(f"/api/tables/{tid}/seats/0", json={"player": "bob"})
    assert again.status_code == 201 and again.get_json()["token"] != token


def test_engine_down_is_503_and_changes_nothing(gateway_settings, client, app):
    table = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()
    tid = table["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    public = client.get(f"/api/tables/{tid}/view").get_json()
    seat = public["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    assert legal["legal_actions"]
    before = snapshot(app, tid)
    dead = replace(gateway_settings, engine_addresses={GAME: f"127.0.0.1:{free_port()}"}, engine_timeout=1.0)
    down = create_app(dead)
    try:
        c = down.test_client()
        expect(c.get(f"/api/tables/{tid}/view"), 503, "engine_unavailable")
        # Kept with the state by the move that made it, so asking needs no engine.
        assert c.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json() == legal
        move = c.post(
            f"/api/tables/{tid}/actions", json={"action": 0, "version": 0}, headers=bearer(tokens[seat])
        )
        expect(move, 503, "engine_unavailable")
        expect(c.post("/api/tables", json={"game": GAME}), 503)
        operator = session_of(c, down.extensions["cultists"].redis, "operator")  # /metrics: operators
        metrics = c.get("/metrics", headers=operator).get_data(as_text=True)
        assert (
            f'cultists_gateway_engine_errors_total{{code="UNAVAILABLE",game="{GAME}",method="View"}}'
            in metrics
        )
    finally:
        down.extensions["cultists"].close()
    assert snapshot(app, tid) == before


def test_a_table_stored_without_legal_actions_asks_the_engine(client, app):
    """A record written before legal:i existed (or by an engine that leaves Step.legal
    empty) is still answered, through View, with the same list."""
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seed": 9}).get_json()[
        "table"
    ]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    seat = client.get(f"/api/tables/{tid}/view").get_json()["to_act"][0]
    stored = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    redis = app.extensions["cultists"].redis
    redis.hdel(table_key(tid), "legal:0", "legal:1")
    asked = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    assert asked == stored and asked["legal_actions"]


def test_an_event_cursor_past_every_id_is_answered_and_one_past_the_limit_refused(client):
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()["table"]
    reply = client.get(f"/api/tables/{tid}/events?after={LAST_EVENT_ID}")
    assert reply.status_code == 200
    assert reply.get_json() == {"game": GAME, "events": [], "last": LAST_EVENT_ID, "more": False}
    for cursor in (LAST_EVENT_ID + 1, 10**30):
        for url in (
            f"/api/tables/{tid}/events?after={cursor}",
            f"/api/tables/{tid}/events/stream?after={cursor}",
        ):
            refused = client.get(url)
            assert refused.status_code == 400 and refused.get_json()["error"]["code"] == "malformed"


# Bodies the document declares, each sent where it goes, with what else the request needs.
DOCUMENTED_BODIES = [
    ("post", "/api/tables", "NewTable", {"game": GAME}),
    ("post", "/api/players/guest", "GuestSignIn", {"device": "d" * 20}),
    ("post", "/api/sessions", "Login", {"username": "nobody", "password": "x"}),
    ("post", "/api/matchmaking/tickets", "NewTicket", {"game": GAME}),
    ("post", "/api/players/me/upgrade", "Upgrade", {"username": "someone", "password": "p" * 10}),
    ("patch", "/api/players/me", "Rename", {}),
]


# Texts of a fitting length one pattern or another refuses: a space and a mark (a username,
# a bot's budget), a bidi override and a control character (a display name, which takes
# spaces and marks inside it, docs/security.md).
UNMATCHED = ("xxx !", "xx\u202exx", "xx\u0007xx")


def _unmatched(pattern: str) -> str:
    """A text the document's `pattern` refuses (read as JSON Schema does: a search)."""
    refused = [text for text in UNMATCHED if not re.search(pattern, text)]
    assert refused, f"no probe the pattern {pattern!r} refuses"
    return refused[0]


def _outside(prop: dict) -> list:
    """Values the schema `prop` refuses: past its bounds, the wrong type."""
    if "$ref" in prop or "allOf" in prop:
        return [12345]
    kind = prop.get("type")
    out: list = [[]] if kind != "array" else ["text"]
    if kind in ("integer", "number"):
        out += ["1", True]
        out += [prop["maximum"] + 1] if "maximum" in prop else []
        out += [prop["minimum"] - 1] if "minimum" in prop else []
    if kind == "string":
        out += [1]
        out += ["x" * (prop["maxLength"] + 1)] if "maxLength" in prop else []
        out += ["x" * (prop["minLength"] - 1)] if prop.get("minLength", 0) > 1 else []
        out += [_unmatched(prop["pattern"])] if "pattern" in prop else []
    if "enum" in prop:
        out += ["not-one-of-them"]
    if not prop.get("nullable"):
        out += [None]
    return out


def model_fields(schema: dict) -> dict:
    """The model's own part of a body's schema: all of it, or the first of an `allOf` whose
    second part bounds it further (NewTable's alternatives per game, lobby_api)."""
    return schema["allOf"][0] if "allOf" in schema else schema


def test_every_documented_body_field_is_checked_as_documented(client):
    """The document and the checks are one declaration: for every field of every request
    body the document lists, a value its schema refuses is a 400 `malformed` naming that
    field, and a required field left out is one too; nothing is written."""
    doc = client.get("/api/openapi.json").get_json()
    schemas = doc["components"]["schemas"]
    session = {
        "X-Player-Token": client.post("/api/players/guest", json={"device": "e" * 20}).get_json()["token"]
    }
    checked = 0
    for method, path, name, base in DOCUMENTED_BODIES:
        body_ref = doc["paths"][documented_path(path)][method]["requestBody"]["content"]["application/json"][
            "schema"
        ]["$ref"]
        assert body_ref.endswith(f"/{name}")
        schema = model_fields(schemas[name])
        send = getattr(client, method)
        for field in schema.get("required", []):
            missing = {k: v for k, v in base.items() if k != field}
            error = expect(send(path, json=missing, headers=session), 400, "malformed")
            assert f"'{field}'" in error["message"], (path, error)
        for field, prop in schema["properties"].items():
            for value in _outside(prop):
                error = expect(send(path, json={**base, field: value}, headers=session), 400, "malformed")
                assert f"'{field}" in error["message"], (path, field, value, error)
                checked += 1
    assert checked > 40
    assert client.get("/api/tables").get_json()["total"] == 0, "nothing was opened"


def test_null_is_the_default_of_every_optional_body_field(client):
    doc = client.get("/api/openapi.json").get_json()
    for name in ("NewTable", "JoinSeat", "NewTicket", "GuestSignIn", "Rename"):
        schema = model_fields(doc["components"]["schemas"][name])
        optional = set(schema["properties"]) - set(schema.get("required", []))
        assert optional and all(schema["properties"][f].get("nullable") for f in optional), name


def test_a_method_the_path_does_not_take_is_405_with_allow(client):
    for method in ("TRACE", "PUT"):
        reply = client.open("/api/games", method=method)
        assert reply.status_code == 405 and reply.get_json()["error"]["code"] == "method_not_allowed"
        assert {"GET", "HEAD", "OPTIONS"} <= {m.strip() for m in reply.headers["Allow"].split(",")}
