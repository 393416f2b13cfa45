"""Players who are who they say (issue 15): guests from a device id, accounts with
Argon2-hashed passwords, sessions that expire and can be revoked, display names apart from
identity, and seats, tickets and ratings bound to the player's id."""

from __future__ import annotations

import time

from services.gateway import create_app
from services.platform.keys import player_key, table_key
from services.platform.ratings import DEFAULT, forfeit
from services.platform.settings import Settings

from .conftest import bearer
from .support import sign_in_guest, wait_for

GAME = "trash_cult"  # 2 players by its rules (Crazy Cultists needs CC-2's switch for 2)


def _code(reply) -> str:
    return reply.get_json()["error"]["code"]


def test_a_device_is_one_guest_with_a_name_apart_from_its_id(client):
    first = sign_in_guest(client, "ann", device="d" * 32)
    again = sign_in_guest(client, "someone else", device="d" * 32)
    assert first["kind"] == "guest" and first["name"] == "ann"
    assert again["player"] == first["player"] and again["token"] != first["token"], "same player, new session"
    me = client.get("/api/players/me", headers=again["headers"]).get_json()
    assert me == {
        "player": first["player"],
        "name": "ann",
        "kind": "guest",
        "username": None,
        "roles": ["player"],
    }
    renamed = client.patch("/api/players/me", json={"name": "Ann the Bold"}, headers=first["headers"])
    assert renamed.get_json()["name"] == "Ann the Bold" and renamed.get_json()["player"] == first["player"]
    other = sign_in_guest(client, "Ann the Bold")
    assert other["player"] != first["player"], "a display name is not an identity"
    assert client.post("/api/players/guest", json={"device": "short"}).status_code == 400
    assert client.get("/api/players/me").status_code == 401
    assert _code(client.get("/api/players/me", headers={"X-Player-Token": "made-up"})) == "session_expired"


def test_a_guest_upgrades_to_a_username_and_password(client, app):
    guest = sign_in_guest(client, "bea", device="e" * 32)
    body = {"username": "bea", "password": "correct horse battery"}
    upgraded = client.post("/api/players/me/upgrade", json=body, headers=guest["headers"])
    assert upgraded.status_code == 200, upgraded.get_json()
    session = upgraded.get_json()
    assert {k: v for k, v in session.items() if k not in ("token", "expires")} == {
        "player": guest["player"],
        "name": "bea",
        "kind": "account",
        "username": "bea",
        "roles": ["player"],
    }
    # The guest's session ended with the upgrade; the one it answered with is the account's.
    assert _code(client.get("/api/players/me", headers=guest["headers"])) == "session_expired"
    mine = client.get("/api/players/me", headers={"X-Player-Token": session["token"]})
    assert mine.get_json()["kind"] == "account"
    stored = app.extensions["cultists"].redis.hget(player_key(guest["player"]), "password").decode()
    assert stored.startswith("$argon2id$") and "correct horse" not in stored
    # The device alone no longer signs in; the password does, as the same player.
    assert _code(client.post("/api/players/guest", json={"device": "e" * 32})) == "upgraded"
    login = client.post("/api/sessions", json=body)
    assert login.status_code == 201 and login.get_json()["player"] == guest["player"]
    assert (
        _code(client.post("/api/sessions", json={**body, "password": "wrong password"})) == "bad_credentials"
    )
    assert _code(client.post("/api/sessions", json={"username": "nobody", "password": "x" * 10})) == (
        "bad_credentials"
    )
    other = sign_in_guest(client, "BEA")
    taken = client.post("/api/players/me/upgrade", json={**body, "username": "BEA"}, headers=other["headers"])
    assert taken.status_code == 409 and _code(taken) == "username_taken"
    short = client.post(
        "/api/players/me/upgrade", json={"username": "cy", "password": "x"}, headers=other["headers"]
    )
    assert short.status_code == 400


def test_sessions_expire_and_can_be_revoked(client, gateway_settings, app):
    one = sign_in_guest(client, "cal", device="f" * 32)
    two = sign_in_guest(client, "cal", device="f" * 32)
    assert client.delete("/api/sessions/current", headers=one["headers"]).status_code == 200
    assert _code(client.get("/api/players/me", headers=one["headers"])) == "session_expired"
    assert client.get("/api/players/me", headers=two["headers"]).status_code == 200, "only that one ended"
    three = sign_in_guest(client, "cal", device="f" * 32)
    assert client.delete("/api/sessions", headers=three["headers"]).get_json()["revoked"] == 2
    for session in (two, three):
        assert client.get("/api/players/me", headers=session["headers"]).status_code == 401

    short = create_app(Settings(**{**gateway_settings.__dict__, "session_ttl_seconds": 1}))
    try:
        brief = sign_in_guest(short.test_client(), "dee")
        wait_for(
            lambda: short.test_client().get("/api/players/me", headers=brief["headers"]).status_code == 401,
            timeout=10,
            what="the session to expire",
        )
    finally:
        short.extensions["cultists"].close()


def test_a_seat_taken_signed_in_is_bound_to_its_player(client):
    ann, bob = sign_in_guest(client, "ann"), sign_in_guest(client, "bob")
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    mine = client.post(f"/api/tables/{tid}/seats/0", headers=ann["headers"]).get_json()["token"]
    # Unrated tables still take players without an account: the seat's token alone.
    anonymous = client.post(f"/api/tables/{tid}/seats/1").get_json()["token"]
    seats = client.get(f"/api/tables/{tid}").get_json()["seats"]
    assert seats[0]["player"] == "ann" and seats[0]["player_id"] == ann["player"]
    assert seats[1]["player_id"] is None and seats[0]["bot"] is None, "no bot is named for a human seat"
    url = f"/api/tables/{tid}/view"
    assert _code(client.get(url, headers=bearer(mine))) == "sign_in_required", (
        "a leaked token alone is no use"
    )
    assert _code(client.get(url, headers={**bearer(mine), **bob["headers"]})) == "other_player"
    assert client.get(url, headers={**bearer(mine), **ann["headers"]}).get_json()["seat"] == 0
    assert client.get(url, headers=bearer(anonymous)).get_json()["seat"] == 1


def _queue(client, session: dict, name: str) -> dict:
    reply = client.post(
        "/api/matchmaking/tickets",
        json={"game": GAME, "players": 2, "player": name},
        headers=session["headers"],
    )
    return reply


def test_one_player_cannot_take_two_seats_of_a_rated_table(client, app):
    """The issue's probe: two tickets under one name were matched into one rated table.
    Now a ticket is the session's player's, one at a time; the same display name on two
    players is two players."""
    gw = app.extensions["cultists"]
    ann = sign_in_guest(client, "ann")
    first = _queue(client, ann, "ann")
    assert first.status_code == 201
    second = _queue(client, ann, "ann")
    assert second.status_code == 409 and _code(second) == "already_queued"
    # Another player may call themselves "ann" too: a separate identity, rated apart.
    namesake = sign_in_guest(client, "ann")
    other = _queue(client, namesake, "ann")
    assert other.status_code == 201
    # Someone else's session cannot look at or cancel a ticket, even with its token.
    ticket = first.get_json()
    url = f"/api/matchmaking/tickets/{ticket['ticket']}"
    assert (
        _code(client.get(url, headers={**bearer(ticket["token"]), **namesake["headers"]})) == "other_player"
    )
    assert _code(client.get(url, headers=bearer(ticket["token"]))) == "sign_in_required"

    def seated() -> str | None:
        gw.matchmaking.match(GAME, 2)
        status = client.get(url, headers={**bearer(ticket["token"]), **ann["headers"]}).get_json()
        return status["table"] if status["status"] == "matched" else None

    tid = wait_for(seated, timeout=15, what="the two players to be matched")
    seats = client.get(f"/api/tables/{tid}").get_json()["seats"]
    assert sorted(s["player_id"] for s in seats) == sorted([ann["player"], namesake["player"]])
    assert [s["player"] for s in seats] == ["ann", "ann"]
    # Matched, the player may queue again.
    assert _queue(client, ann, "ann").status_code == 201


def test_leaving_counts_as_a_loss():
    assert forfeit([1.0, 0.0, 0.5], [False, False, False]) == [1.0, 0.0, 0.5]
    assert forfeit([1.0, 0.0, 0.5], [True, False, False]) == [-1.0, 0.0, 0.5], "the leaver is last"


def test_leaving_a_rated_game_early_lowers_the_leavers_rating(client, app, table_worker):
    gw = app.extensions["cultists"]
    quitter, stayer = sign_in_guest(client, "quitter"), sign_in_guest(client, "stayer")
    tickets = {}
    for who in (quitter, stayer):
        reply = _queue(client, who, who["name"]).get_json()
        tickets[who["player"]] = {**bearer(reply["token"]), **who["headers"]}
        ticket_url = f"/api/matchmaking/tickets/{reply['ticket']}"

    def seated():
        gw.matchmaking.match(GAME, 2)
        status = client.get(ticket_url, headers=tickets[stayer["player"]]).get_json()
        return status if status["status"] == "matched" else None

    status = wait_for(seated, timeout=15, what="the match")
    tid = status["table"]
    table = client.get(f"/api/tables/{tid}")
    assert table.status_code == 200, table.get_json()
    seat_of = {s["player_id"]: s["seat"] for s in table.get_json()["seats"]}
    gone = seat_of[quitter["player"]]
    left = client.delete(f"/api/tables/{tid}/seats/{gone}", headers=tickets[quitter["player"]])
    assert left.status_code == 200, left.get_json()
    assert gw.redis.hget(table_key(tid), f"left:{gone}") == b"1"
    headers = tickets[stayer["player"]]

    def my_turn_or_over():
        view = client.get(f"/api/tables/{tid}/view", headers=headers).get_json()
        return view if view["legal_actions"] or view["terminal"] else None

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = wait_for(my_turn_or_over, timeout=30, what="the stayer's turn")
        if view["terminal"]:
            break
        move = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
        client.post(f"/api/tables/{tid}/actions", json=move, headers=headers)
    wait_for(lambda: tid not in gw.store.to_rate(), timeout=15, what="the rating update")
    lost = client.get(f"/api/matchmaking/ratings/{GAME}/{quitter['player']}").get_json()
    won = client.get(f"/api/matchmaking/ratings/{GAME}/{stayer['player']}").get_json()
    assert lost["mu"] < DEFAULT[0] < won["mu"], "whatever its bot did, the seat that left lost"
    nobody = client.get(f"/api/matchmaking/ratings/{GAME}/quitter").get_json()
    assert (nobody["mu"], nobody["sigma"]) == DEFAULT, "nothing is rated under a display name"
