"""Accounts with roles for tests: a designer or operator made as `cultists admin` makes
them (PlayerBook.create_account on the real Redis), signed in through the real API."""

from __future__ import annotations

import secrets

from services.platform.players import PlayerBook

PASSWORD = "a long test passphrase 7"


def make_account(redis_client, role: str, name: str | None = None) -> str:
    """A new account with `role` in the Redis the app reads; its username."""
    username = name or f"{role}-{secrets.token_hex(4)}"
    PlayerBook(redis_client, 0).create_account(username, PASSWORD, role)
    return username


def session_of(client, redis_client, role: str) -> dict[str, str]:
    """Headers of a fresh session of a new account holding `role`, signed in with POST
    /api/sessions; or, on a bare app without the players blueprint, made by the book."""
    username = make_account(redis_client, role)
    reply = client.post("/api/sessions", json={"username": username, "password": PASSWORD})
    if reply.status_code == 404:  # a bare balance app: no sign-in route
        token = PlayerBook(redis_client, 3600).login(username, PASSWORD)["token"]
    else:
        assert reply.status_code == 201, reply.get_json()
        token = reply.get_json()["token"]
    return {"X-Player-Token": token}


def act_as(client, redis_client, role: str):
    """`client` sending a `role` session with every request; returns it."""
    headers = session_of(client, redis_client, role)
    client.environ_base["HTTP_X_PLAYER_TOKEN"] = headers["X-Player-Token"]
    return client
