"""What a publisher's own client relies on (issue 33): the versioned paths, CORS for
configured origins, safe retries (Idempotency-Key, a seat recovered from the session,
Location on what a POST makes), stream tickets for a browser EventSource, a matchmaking
ticket's stream, and move limits per seat and per decision with RateLimit-* headers.
Real Flask app, real Redis, real engines; nothing here needs a worker (tables are humans
only, matchmaking passes run in-process)."""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from services.gateway import create_app
from services.platform.keys import ticket_key
from services.platform.settings import Settings

from .conftest import bearer
from .support import sign_in_guest, sse_events

GAME = "trash_cult"  # two humans, no bots: nothing moves but what the test sends
ORIGIN = "https://client.example"


def _app(gateway_settings: Settings, **changes):
    return create_app(Settings(**{**gateway_settings.__dict__, **changes}))


def _key() -> dict[str, str]:
    return {"Idempotency-Key": str(uuid.uuid4())}


def _two_seats(client, headers=None) -> tuple[str, list[str]]:
    tid = client.post("/api/v1/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    tokens = [
        client.post(f"/api/v1/tables/{tid}/seats/{s}", headers=headers or {}).get_json()["token"]
        for s in (0, 1)
    ]
    return tid, tokens


def _move(client, tid: str, token: str, headers=None):
    legal = client.get(f"/api/v1/tables/{tid}/legal", headers={**bearer(token), **(headers or {})}).get_json()
    body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
    return client.post(
        f"/api/v1/tables/{tid}/actions", json=body, headers={**bearer(token), **(headers or {})}
    )


def _turn(client, tid: str, tokens: list[str]) -> str:
    return tokens[client.get(f"/api/v1/tables/{tid}").get_json()["to_act"][0]]


# -- versions -------------------------------------------------------------------------------
def test_v1_is_the_api_and_the_unversioned_paths_are_its_alias(client):
    assert client.get("/api/v1/games").get_data() == client.get("/api/games").get_data()
    made = client.post("/api/v1/tables", json={"game": GAME, "players": 2})
    assert made.status_code == 201
    assert made.headers["Location"] == f"/api/v1/tables/{made.get_json()['table']}"
    assert client.get(made.headers["Location"]).get_json()["table"] == made.get_json()["table"]
    doc = client.get("/api/v1/openapi.json").get_json()
    assert doc == client.get("/api/openapi.json").get_json()
    assert all(path.startswith("/api/v1/") for path in doc["paths"])
    assert client.get("/api/v2/games").status_code == 404
    assert client.get("/api/v1x/games").status_code == 404


def test_every_201_says_where_the_new_thing_is(client):
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    joined = client.post(f"/api/tables/{tid}/seats/0")
    assert joined.headers["Location"] == f"/api/v1/tables/{tid}/seats/0"
    assert client.get(joined.headers["Location"]).get_json()["claimed"] is True
    guest = client.post("/api/v1/players/guest", json={"device": "location-device-0001"})
    assert guest.headers["Location"] == "/api/v1/players/me"
    ticket = client.post(
        "/api/v1/matchmaking/tickets",
        json={"game": GAME, "players": 2},
        headers={"X-Player-Token": guest.get_json()["token"]},
    )
    assert ticket.headers["Location"] == f"/api/v1/matchmaking/tickets/{ticket.get_json()['ticket']}"


# -- CORS -------------------------------------------------------------------------------------
def _preflight(client, path: str, origin: str):
    return client.options(
        path,
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type, idempotency-key, x-player-token",
        },
    )


def test_cors_answers_only_the_configured_origins(gateway_settings, client):
    path = "/api/v1/tables/0123456789abcdef/actions"
    assert "Access-Control-Allow-Origin" not in _preflight(client, path, ORIGIN).headers, "none by default"
    app = _app(gateway_settings, cors_origins=(ORIGIN,))
    try:
        cors = app.test_client()
        reply = _preflight(cors, path, ORIGIN)
        assert reply.status_code == 200
        assert reply.headers["Access-Control-Allow-Origin"] == ORIGIN
        assert "POST" in reply.headers["Access-Control-Allow-Methods"]
        allowed = reply.headers["Access-Control-Allow-Headers"].lower()
        for header in ("authorization", "idempotency-key", "x-player-token", "content-type"):
            assert header in allowed
        assert "Access-Control-Allow-Credentials" not in reply.headers, "tokens are headers, never cookies"
        assert "Origin" in reply.headers.get("Vary", "")
        assert "Access-Control-Allow-Origin" not in _preflight(cors, path, "https://evil.example").headers
        made = cors.post("/api/v1/tables", json={"game": GAME}, headers={"Origin": ORIGIN})
        assert made.headers["Access-Control-Allow-Origin"] == ORIGIN
        exposed = made.headers["Access-Control-Expose-Headers"]
        assert "Location" in exposed and "RateLimit-Remaining" in exposed and "Retry-After" in exposed
        assert "Access-Control-Allow-Origin" not in cors.get("/", headers={"Origin": ORIGIN}).headers, (
            "the pages never answer cross-origin"
        )
    finally:
        app.extensions["cultists"].close()


# -- safe retries -------------------------------------------------------------------------------
def test_a_retried_write_gets_the_first_answer_byte_for_byte_and_happens_once(client):
    key = _key()
    first = client.post("/api/v1/tables", json={"game": GAME, "players": 2}, headers=key)
    again = client.post("/api/v1/tables", json={"game": GAME, "players": 2}, headers=key)
    assert first.status_code == again.status_code == 201
    assert again.get_data() == first.get_data() and again.headers["Location"] == first.headers["Location"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert len(client.get("/api/v1/tables").get_json()["tables"]) == 1, "one table, not two"
    other = client.post("/api/v1/tables", json={"game": GAME, "players": 3}, headers=key)
    assert other.status_code == 422 and other.get_json()["error"]["code"] == "idempotency_key_reused"
    # Too short, or not the document's visible ASCII (a space inside, a tab): refused, unused.
    for wrong in ("short", "a key with spaces", "tab\there-key", "clé-unicode-key"):
        bad = client.post("/api/v1/tables", json={"game": GAME}, headers={"Idempotency-Key": wrong})
        assert bad.status_code == 400 and bad.get_json()["error"]["field"] == "Idempotency-Key", wrong
    assert len(client.get("/api/v1/tables").get_json()["tables"]) == 1, "a refused key writes nothing"


def test_a_move_whose_answer_was_lost_is_retried_without_a_second_effect(client):
    tid, tokens = _two_seats(client)
    token = _turn(client, tid, tokens)
    legal = client.get(f"/api/v1/tables/{tid}/legal", headers=bearer(token)).get_json()
    move = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
    headers = {**bearer(token), **_key()}
    first = client.post(f"/api/v1/tables/{tid}/actions", json=move, headers=headers)
    assert first.status_code == 200
    retry = client.post(f"/api/v1/tables/{tid}/actions", json=move, headers=headers)
    assert retry.status_code == 200 and retry.get_data() == first.get_data(), "not 409 stale_version"
    assert client.get(f"/api/v1/tables/{tid}").get_json()["version"] == legal["version"] + 1, "moved once"
    fresh = client.post(f"/api/v1/tables/{tid}/actions", json=move, headers=bearer(token))
    assert fresh.status_code == 409 and fresh.get_json()["error"]["code"] == "stale_version", (
        "a new move races"
    )


def test_a_lost_join_is_recovered_by_its_key_or_by_the_players_session(client):
    tid = client.post("/api/v1/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    key = _key()
    first = client.post(f"/api/v1/tables/{tid}/seats/0", headers=key)
    again = client.post(f"/api/v1/tables/{tid}/seats/0", headers=key)
    assert again.get_data() == first.get_data(), "the same token again"
    ada = sign_in_guest(client, "ada")
    client.post(f"/api/v1/tables/{tid}/seats/1", headers=ada["headers"])  # the answer is lost
    lost = client.post(f"/api/v1/tables/{tid}/seats/1", headers=ada["headers"])
    assert lost.status_code == 409 and "reissues" in lost.get_json()["error"]["message"]
    bob = sign_in_guest(client, "bob")
    refused = client.post(f"/api/v1/tables/{tid}/seats/1/token", headers=bob["headers"])
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "other_player"
    assert client.post(f"/api/v1/tables/{tid}/seats/0/token", headers=ada["headers"]).status_code == 403
    assert client.post(f"/api/v1/tables/{tid}/seats/1/token").status_code == 401
    found = client.post(f"/api/v1/tables/{tid}/seats/1/token", headers=ada["headers"])
    assert found.status_code == 200 and found.get_json()["seat"] == 1
    token = found.get_json()["token"]
    view = client.get(f"/api/v1/tables/{tid}/view", headers={**bearer(token), **ada["headers"]})
    assert view.status_code == 200 and view.get_json()["seat"] == 1


# -- stream tickets ---------------------------------------------------------------------------
def test_a_stream_ticket_opens_the_seats_stream_once(client):
    tid, tokens = _two_seats(client)
    made = client.post(f"/api/v1/tables/{tid}/stream-ticket", headers=bearer(tokens[1]))
    assert made.status_code == 201
    ticket = made.get_json()
    assert made.headers["Location"] == ticket["url"] and f"?ticket={ticket['ticket']}" in ticket["url"]
    stream = client.get(ticket["url"], buffered=False)
    try:
        name, state = next(sse_events(stream))
    finally:
        stream.close()
    assert name == "state" and state["seat"] == 1 and "legal_actions" in state
    used = client.get(ticket["url"])
    assert used.status_code == 401 and used.get_json()["error"]["code"] == "invalid_ticket"
    assert client.post(f"/api/v1/tables/{tid}/stream-ticket").status_code == 401
    elsewhere, _ = _two_seats(client)
    wrong = client.post(f"/api/v1/tables/{tid}/stream-ticket", headers=bearer(tokens[0])).get_json()
    assert client.get(f"/api/v1/tables/{elsewhere}/events/stream?ticket={wrong['ticket']}").status_code == 401


def test_a_stream_ticket_dies_with_the_token_it_was_issued_for(client):
    ada = sign_in_guest(client, "ada")
    tid, tokens = _two_seats(client, ada["headers"])
    ticket = client.post(
        f"/api/v1/tables/{tid}/stream-ticket", headers={**bearer(tokens[0]), **ada["headers"]}
    ).get_json()
    client.post(f"/api/v1/tables/{tid}/seats/0/token", headers=ada["headers"])  # the old token is gone
    assert client.get(ticket["url"]).status_code == 401


def _queue(client, player, players: int) -> dict:
    made = client.post(
        "/api/v1/matchmaking/tickets", json={"game": GAME, "players": players}, headers=player["headers"]
    )
    assert made.status_code == 201, made.get_json()
    return {**made.get_json(), "auth": {**bearer(made.get_json()["token"]), **player["headers"]}}


def _ticket_events(client, ticket: dict, via_ticket: bool = True):
    """The ticket's stream: opened with a stream ticket, or with the token's headers."""
    if via_ticket:
        made = client.post(
            f"/api/v1/matchmaking/tickets/{ticket['ticket']}/stream-ticket", headers=ticket["auth"]
        )
        assert made.status_code == 201
        return client.get(made.get_json()["url"], buffered=False)
    return client.get(
        f"/api/v1/matchmaking/tickets/{ticket['ticket']}/stream", headers=ticket["auth"], buffered=False
    )


def test_a_matchmaking_ticket_has_a_stream_matched_bots_filled_and_cancelled(app, client):
    """Whoever runs the pass (this test, or a table worker another test left running), the
    stream tells the same story: the state first, then how the ticket ended."""
    gw = app.extensions["cultists"]
    pair = [_queue(client, sign_in_guest(client, name), 2) for name in ("ann", "ben")]
    gw.matchmaking.match(GAME, 2)  # the two sit together (a no-op if a worker did it already)
    streams = [_ticket_events(client, t, via_ticket=i == 0) for i, t in enumerate(pair)]
    try:
        told = [[name for name, _ in sse_events(s)] for s in streams]
    finally:
        for stream in streams:
            stream.close()
    assert told == [["state", "matched", "end"]] * 2
    matched = client.get(
        f"/api/v1/matchmaking/tickets/{pair[0]['ticket']}", headers=pair[0]["auth"]
    ).get_json()
    assert matched["status"] == "matched" and matched["bots"] == 0

    alone = _queue(client, sign_in_guest(client, "cid"), 3)
    stream = _ticket_events(client, alone)
    try:
        heard = sse_events(stream)
        name, state = next(heard)
        assert name == "state" and state["status"] == "queued"
        assert (
            client.delete(f"/api/v1/matchmaking/tickets/{alone['ticket']}", headers=alone["auth"]).status_code
            == 200
        )
        assert [name for name, _ in heard] == ["cancelled", "end"]
    finally:
        stream.close()

    lonely = _queue(client, sign_in_guest(client, "dan"), 4)
    stream = _ticket_events(client, lonely)
    try:
        heard = sse_events(stream)
        assert next(heard)[0] == "state"
        created = float(gw.redis.hget(ticket_key(GAME, 4, lonely["ticket"]), "created"))
        gw.matchmaking.match(GAME, 4, now=created + 3600)  # waited long enough: bots fill the rest
        events = list(heard)
    finally:
        stream.close()
    assert [name for name, _ in events] == ["bots_filled", "matched", "end"]
    assert events[1][1]["bots"] == 3 and events[1][1]["table"]


# -- move limits --------------------------------------------------------------------------------
def test_moves_are_limited_per_seat_and_decision_and_say_so(gateway_settings, client):
    app = _app(gateway_settings, move_tries_per_decision=3, rate_limit_address="1/minute")
    try:
        limited = app.test_client()
        tid, tokens = _two_seats(client)  # opened through the unlimited app
        for _ in range(6):  # six decisions in a row, each moved at once: never refused
            reply = _move(limited, tid, _turn(client, tid, tokens))
            assert reply.status_code == 200, reply.get_json()
            assert reply.headers["RateLimit-Limit"] == "3" and reply.headers["RateLimit-Remaining"] == "2"
            assert 'comment="decision"' in reply.headers["RateLimit-Policy"]
        idle = tokens[1 - tokens.index(_turn(client, tid, tokens))]
        version = client.get(f"/api/v1/tables/{tid}").get_json()["version"]
        for _ in range(3):  # not its turn: refused by the engine, each a try
            tried = limited.post(
                f"/api/v1/tables/{tid}/actions", json={"action": 0, "version": version}, headers=bearer(idle)
            )
            assert tried.status_code == 400
        over = limited.post(
            f"/api/v1/tables/{tid}/actions", json={"action": 0, "version": version}, headers=bearer(idle)
        )
        assert over.status_code == 429 and over.get_json()["error"]["code"] == "move_limited"
        assert int(over.headers["Retry-After"]) >= 1 and over.headers["RateLimit-Remaining"] == "0"
        assert _move(limited, tid, _turn(client, tid, tokens)).status_code == 200, "the other seat moves on"
        # Every other write counts against the write limit, and says where it stands.
        first = limited.post("/api/v1/tables", json={"game": GAME})
        assert first.status_code == 201 and first.headers["RateLimit-Remaining"] == "0"
        assert 'comment="writes"' in first.headers["RateLimit-Policy"]
        second = limited.post("/api/v1/tables", json={"game": GAME})
        assert second.status_code == 429 and second.get_json()["error"]["code"] == "rate_limited"
        assert second.headers["RateLimit-Limit"] == "1" and int(second.headers["Retry-After"]) >= 1
    finally:
        app.extensions["cultists"].close()


def _idle_try(client, tid: str, token: str, version: int):
    return client.post(
        f"/api/v1/tables/{tid}/actions", json={"action": 0, "version": version}, headers=bearer(token)
    )


def test_racing_tries_are_each_counted_and_no_more_than_the_limit_pass(gateway_settings, client):
    """The count is one HINCRBY on the table's hash: tries sent at once each get their own
    number, so exactly `limit` of them are looked at and the rest hear 429."""
    app = _app(gateway_settings, move_tries_per_decision=3)
    try:
        tid, tokens = _two_seats(client)
        idle = tokens[1 - tokens.index(_turn(client, tid, tokens))]
        version = client.get(f"/api/v1/tables/{tid}").get_json()["version"]
        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(lambda _: _idle_try(app.test_client(), tid, idle, version), range(8)))
        assert sorted(r.status_code for r in replies) == [400] * 3 + [429] * 5
        # The count is a field of the table's own record: no key per seat and version.
        redis = app.extensions["cultists"].redis
        assert not list(redis.scan_iter(match="*tries*")), "no key of its own"
        assert _move(app.test_client(), tid, _turn(client, tid, tokens)).status_code == 200
        after = _idle_try(app.test_client(), tid, idle, version + 1)
        assert after.status_code == 400 and after.headers["RateLimit-Remaining"] == "2", "a new decision"
    finally:
        app.extensions["cultists"].close()


def test_a_seat_over_its_limit_may_try_again_once_the_window_runs_out(gateway_settings, client):
    app = _app(gateway_settings, move_tries_per_decision=2, move_window_seconds=1)
    try:
        limited = app.test_client()
        tid, tokens = _two_seats(client)
        idle = tokens[1 - tokens.index(_turn(client, tid, tokens))]
        version = client.get(f"/api/v1/tables/{tid}").get_json()["version"]
        assert [_idle_try(limited, tid, idle, version).status_code for _ in range(3)] == [400, 400, 429]
        deadline = time.monotonic() + 30  # the window is 1 s; the bound is for a busy machine
        while (again := _idle_try(limited, tid, idle, version)).status_code == 429:
            assert time.monotonic() < deadline, "the window never ran out"
            time.sleep(0.2)
        assert again.status_code == 400 and again.headers["RateLimit-Remaining"] == "1", "counted from 1"
        assert _idle_try(limited, tid, idle, version).status_code == 400
        assert _idle_try(limited, tid, idle, version).status_code == 429, "the new window has its limit"
    finally:
        app.extensions["cultists"].close()


@pytest.mark.parametrize("path", ["/api/v1/tables/{tid}/events/stream", "/api/v1/tables/{tid}/events"])
def test_streams_and_pages_refuse_unknown_parameters(client, path):
    tid, _ = _two_seats(client)
    assert client.get(path.format(tid=tid) + "?tiket=x").status_code == 400


# -- one vocabulary ------------------------------------------------------------------------------
@pytest.mark.parametrize("game", ["trash_cult", "crazy_cultists", "tricky_cultists"])
def test_every_games_actions_also_speak_the_shared_vocabulary(client, game):
    """Beside each game's own detail, an action says `kind`, `card` (always an object with
    a string id and a printed name) and `target` (the seat), absent where they do not
    apply, never "" or -1, in every game alike."""
    players = 4 if game == "tricky_cultists" else 2
    config = {"two_players": True} if game == "crazy_cultists" else {}
    tid = client.post("/api/v1/tables", json={"game": game, "players": players, "config": config}).get_json()[
        "table"
    ]
    tokens = [client.post(f"/api/v1/tables/{tid}/seats/{s}").get_json()["token"] for s in range(players)]
    seen = {"card": 0, "target": 0}
    for _ in range(30):
        table = client.get(f"/api/v1/tables/{tid}").get_json()
        if table["status"] != "playing":
            break
        seat = table["to_act"][0]
        legal = client.get(f"/api/v1/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        for action in legal["legal_actions"]:
            assert action["kind"] == action["detail"]["kind"]
            if "card" in action:
                card = action["card"]
                assert isinstance(card["id"], str) and card["id"] and card["name"], action
                seen["card"] += 1
            if "target" in action:
                assert isinstance(action["target"], int) and 0 <= action["target"] < players, action
                own = action["detail"].get("seat" if game == "trash_cult" else "target")
                assert action["target"] == own
                seen["target"] += 1
            assert action.get("card", {}) != "" and action.get("target") != -1
        choice = legal["legal_actions"][-1]
        client.post(
            f"/api/v1/tables/{tid}/actions",
            json={"action": choice["id"], "version": legal["version"]},
            headers=bearer(tokens[seat]),
        )
    assert seen["card"] > 0
    if game == "crazy_cultists":
        names = {a["card"]["name"] for a in legal["legal_actions"] if "card" in a}
        assert all("_" not in n for n in names), "printed titles, not machine names"


def test_log_entries_are_structured_beside_the_words(client):
    ada = sign_in_guest(client, "ada")
    tid, tokens = _two_seats(client, ada["headers"])
    _move(client, tid, _turn(client, tid, tokens), ada["headers"])
    entries = client.get(f"/api/v1/tables/{tid}/events").get_json()["events"]
    for entry in entries:
        assert {"id", "version", "at", "kind", "seat", "payload", "text"} <= set(entry), entry
        assert isinstance(entry["payload"], dict) and entry["at"] > 0
    kinds = [e["kind"] for e in entries]
    assert kinds[:3] == ["created", "joined", "joined"]
    assert entries[0]["payload"] == {"game": GAME, "players": 2}
    assert entries[1]["payload"] == {"player": "ada", "player_id": ada["player"]}


def test_a_tables_log_page_validates_against_the_documents_typed_events(client):
    """The page names its game, and every entry (the platform's and the game's own kinds,
    after a dozen moves) is that game's `<Game>Event` in the served document."""
    import jsonschema

    tid, tokens = _two_seats(client)
    for _ in range(12):
        if client.get(f"/api/v1/tables/{tid}").get_json()["status"] == "finished":
            break
        _move(client, tid, _turn(client, tid, tokens))
    page = client.get(f"/api/v1/tables/{tid}/events?limit=1000").get_json()
    assert page["game"] == GAME
    doc = client.get("/api/openapi.json").get_json()
    check = jsonschema.Draft7Validator(
        {"$ref": "#/components/schemas/Events", "components": doc["components"]}
    )
    assert not list(check.iter_errors(page)), [e.message for e in check.iter_errors(page)][:3]
    own = [e for e in page["events"] if e["kind"] not in ("created", "joined", "left", "timeout")]
    assert own and any(e["payload"] for e in own), "the game's own events carry their facts"
