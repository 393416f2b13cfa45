"""Signing in that resists guessing (issue 27, item 5): a password policy from zxcvbn and
a minimum length; failed sign-ins throttled per account with a doubling wait, whatever
the address; sessions rotated when a guest upgrades and when a password changes. On the
real app, one Redis and a cluster."""

from __future__ import annotations

import pytest

from services.platform.players import FAILURES_FREE, backoff_seconds

from .support import sign_in_guest, wait_for

STRONG = "staple moon violet kettle"


def _code(reply) -> str:
    return reply.get_json()["error"]["code"]


def _account(client, name: str, password: str = STRONG) -> dict:
    guest = sign_in_guest(client, name)
    reply = client.post(
        "/api/players/me/upgrade", json={"username": name, "password": password}, headers=guest["headers"]
    )
    assert reply.status_code == 200, reply.get_json()
    return reply.get_json()


@pytest.mark.parametrize(
    ("password", "code"),
    [
        ("password", "malformed"),  # under the minimum length
        ("12345678", "malformed"),
        (" " * 8, "malformed"),
        ("password123", "weak_password"),  # long enough, and among the commonest there are
        ("1234567890", "weak_password"),
        ("qwertyuiop", "weak_password"),  # a keyboard run
        ("pppppppppppp", "weak_password"),  # repeats
        ("ambrose2026!", "weak_password"),  # the username and a year
    ],
)
def test_guessable_passwords_are_refused(client, password, code):
    guest = sign_in_guest(client, "ambrose")
    reply = client.post(
        "/api/players/me/upgrade",
        json={"username": "ambrose", "password": password},
        headers=guest["headers"],
    )
    assert reply.status_code == 400 and _code(reply) == code, reply.get_json()
    if code == "weak_password":
        assert reply.get_json()["error"]["field"] == "password"
    assert client.get("/api/players/me", headers=guest["headers"]).get_json()["kind"] == "guest"


def test_failed_sign_ins_are_throttled_per_account_with_a_doubling_wait(client):
    _account(client, "cassia")
    _account(client, "dorian")
    for _ in range(FAILURES_FREE):
        wrong = client.post("/api/sessions", json={"username": "cassia", "password": "not it at all"})
        assert _code(wrong) == "bad_credentials"
    # The right password now waits too: the throttle answers before any hash is checked.
    held = client.post("/api/sessions", json={"username": "cassia", "password": STRONG})
    assert held.status_code == 429 and _code(held) == "login_throttled"
    assert 1 <= int(held.headers["Retry-After"]) <= backoff_seconds(FAILURES_FREE)
    # From another address too (the count is the account's), and other accounts are free.
    other_address = {"X-Forwarded-For": "203.0.113.9"}
    assert (
        _code(
            client.post(
                "/api/sessions", json={"username": "cassia", "password": STRONG}, headers=other_address
            )
        )
        == "login_throttled"
    )
    assert client.post("/api/sessions", json={"username": "dorian", "password": STRONG}).status_code == 201
    # Once the wait is over the right password works, and the failures are forgotten.
    ok = wait_for(
        lambda: (
            (r := client.post("/api/sessions", json={"username": "cassia", "password": STRONG})).status_code
            != 429
            and r
        ),
        timeout=30,
        interval=0.5,
        what="the throttle's wait to pass",
    )
    assert ok.status_code == 201
    assert (
        _code(client.post("/api/sessions", json={"username": "cassia", "password": "not it"}))
        == "bad_credentials"
    )


def test_the_wait_doubles_and_is_capped():
    waits = [backoff_seconds(n) for n in range(FAILURES_FREE + 12)]
    assert waits[:FAILURES_FREE] == [0.0] * FAILURES_FREE
    assert waits[FAILURES_FREE + 1] == 2 * waits[FAILURES_FREE] and max(waits) == 900.0


def test_an_unknown_name_is_throttled_alike(client):
    for _ in range(FAILURES_FREE):
        client.post("/api/sessions", json={"username": "nobody-here", "password": "guess guess"})
    assert (
        _code(client.post("/api/sessions", json={"username": "nobody-here", "password": "x"}))
        == "login_throttled"
    )


def test_changing_the_password_ends_every_session(client):
    first = _account(client, "elowen")
    second = client.post("/api/sessions", json={"username": "elowen", "password": STRONG}).get_json()
    headers = {"X-Player-Token": first["token"]}
    wrong = client.post(
        "/api/players/me/password",
        json={"password": "not the one", "new_password": "river otter lantern"},
        headers=headers,
    )
    assert wrong.status_code == 401 and _code(wrong) == "bad_credentials"
    weak = client.post(
        "/api/players/me/password", json={"password": STRONG, "new_password": "elowen12345"}, headers=headers
    )
    assert _code(weak) == "weak_password"
    changed = client.post(
        "/api/players/me/password",
        json={"password": STRONG, "new_password": "river otter lantern"},
        headers=headers,
    )
    assert changed.status_code == 200, changed.get_json()
    for old in (first["token"], second["token"]):
        assert _code(client.get("/api/players/me", headers={"X-Player-Token": old})) == "session_expired"
    assert (
        client.get("/api/players/me", headers={"X-Player-Token": changed.get_json()["token"]}).status_code
        == 200
    )
    assert (
        _code(client.post("/api/sessions", json={"username": "elowen", "password": STRONG}))
        == "bad_credentials"
    )
    assert (
        client.post(
            "/api/sessions", json={"username": "elowen", "password": "river otter lantern"}
        ).status_code
        == 201
    )
    guest = sign_in_guest(client, "fenn")
    refused = client.post(
        "/api/players/me/password", json={"password": "x", "new_password": STRONG}, headers=guest["headers"]
    )
    assert refused.status_code == 409 and _code(refused) == "not_account"
