"""Limits that cannot be sidestepped (issue 27, item 4): many guests from one address share
its write count; guest sign-ups are limited per address; guests, their devices and idle
waiting tables expire, read back as TTLs from Redis; waiting tables per player (or
address) are capped. On the real app, one Redis and a cluster."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.gateway import create_app
from services.platform.keys import device_key_of, player_key, table_key
from services.platform.store import hash_token
from tests.support.staff import make_account

from .conftest import forget_gateway_keys

GAME = "trash_cult"


@pytest.fixture()
def limited(gateway_settings):
    settings = replace(
        gateway_settings,
        rate_limit_address="6/minute",
        rate_limit_player="100/minute",
        rate_limit_guest="3/minute",
        max_waiting_tables=2,
        guest_ttl_seconds=3600,
    )
    app = create_app(settings)
    redis = app.extensions["cultists"].redis
    forget_gateway_keys(redis, settings.task_broker_url)
    for key in redis.scan_iter("LIMITER*", count=1000):
        redis.delete(key)
    yield app
    for key in redis.scan_iter("LIMITER*", count=1000):
        redis.delete(key)
    forget_gateway_keys(redis, settings.task_broker_url)
    app.extensions["cultists"].close()


def _guest(client, device: str, addr: str):
    return client.post("/api/players/guest", json={"device": device}, environ_base={"REMOTE_ADDR": addr})


def test_guests_from_one_address_share_its_count(limited):
    """Sessions no longer sidestep the address's limit: ten guests' writes from one address
    are refused once that address has made its writes."""
    client = limited.test_client()
    sessions = [_guest(client, f"device-share-{i:04d}", f"10.7.0.{i}").get_json()["token"] for i in range(3)]
    answers = [
        client.post(
            "/api/tables/0123456789abcdef/seats/0",
            headers={"X-Player-Token": sessions[i % 3]},
            environ_base={"REMOTE_ADDR": "10.8.0.1"},
        ).status_code
        for i in range(9)
    ]
    assert answers[:6] == [404] * 6 and set(answers[6:]) == {429}, answers


def test_guest_sign_ups_are_limited_per_address(limited):
    client = limited.test_client()
    made = [_guest(client, f"device-signup-{i:04d}", "10.9.0.1") for i in range(4)]
    assert [r.status_code for r in made] == [201, 201, 201, 429]
    assert made[3].get_json()["error"]["code"] == "rate_limited"
    assert _guest(client, "device-signup-other", "10.9.0.2").status_code == 201  # another address
    # Held only from signing up more guests: that address's other writes still pass.
    tid = client.post(
        "/api/tables", json={"game": GAME, "players": 2}, environ_base={"REMOTE_ADDR": "10.9.0.1"}
    )
    assert tid.status_code == 201


def test_guests_devices_and_waiting_tables_expire(limited):
    """Redis holds nobody forever: a guest's player and device keys, and a waiting table's
    keys, carry TTLs; an account's player key does not."""
    client = limited.test_client()
    redis = limited.extensions["cultists"].redis
    guest = _guest(client, "device-ttl-000001", "10.10.0.1").get_json()
    player_ttl = redis.ttl(player_key(guest["player"]))
    device_ttl = redis.ttl(device_key_of(hash_token("device-ttl-000001")))
    assert 3500 < player_ttl <= 3600 and 3500 < device_ttl <= 3600
    table = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    waiting = limited.extensions["cultists"].settings.waiting_ttl_seconds
    assert waiting - 100 < redis.ttl(table_key(table)) <= waiting
    upgraded = client.post(
        "/api/players/me/upgrade",
        json={"username": "ttl-account", "password": "staple moon violet kettle"},
        headers={"X-Player-Token": guest["token"]},
        environ_base={"REMOTE_ADDR": "10.10.0.1"},
    )
    assert upgraded.status_code == 200
    assert redis.ttl(player_key(guest["player"])) == -1  # an account stays
    made = make_account(redis, "player")
    found = redis.get(f"gw:{{u:{made}}}")
    assert redis.ttl(player_key(found.decode())) == -1


def test_waiting_tables_per_player_and_per_address_are_capped(limited):
    client = limited.test_client()
    guest = _guest(client, "device-cap-000001", "10.11.0.1").get_json()
    mine = {"X-Player-Token": guest["token"]}
    at = {"REMOTE_ADDR": "10.11.0.2"}
    opened = [
        client.post("/api/tables", json={"game": GAME, "players": 2}, headers=mine, environ_base=at)
        for _ in range(3)
    ]
    assert [r.status_code for r in opened] == [201, 201, 429]
    error = opened[2].get_json()["error"]
    assert error["code"] == "too_many_tables" and error["limit"] == 2
    # A table that starts no longer counts: fill one, and there is room again.
    tid = opened[0].get_json()["table"]
    for seat in (0, 1):
        assert client.post(f"/api/tables/{tid}/seats/{seat}", environ_base=at).status_code == 201
    again = client.post("/api/tables", json={"game": GAME, "players": 2}, headers=mine, environ_base=at)
    assert again.status_code == 201
    # Unsigned clients are capped per address.
    other = {"REMOTE_ADDR": "10.11.0.3"}
    anonymous = [
        client.post("/api/tables", json={"game": GAME, "players": 2}, environ_base=other) for _ in range(3)
    ]
    assert [r.status_code for r in anonymous] == [201, 201, 429]
