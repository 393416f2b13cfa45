"""Designers' quotas (issue 27, item 2), checked before anything is planned or queued:
sweeps, tunes and games in flight (429 `quota_exceeded`), search per game (403
`over_quota`), and a spec's planned size refused from its numbers alone (400)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.balance.sweeps import control
from services.balance.sweeps.store import INDEX
from services.gateway import create_app
from services.platform.quotas import DesignerQuotas
from tests.support.staff import session_of
from tests.tune.specs import SMALL_CC_TUNE

from .conftest import forget_gateway_keys

SWEEP = {"game": "trash_cult", "players": [2], "games": 10, "chunk": 5, "seed": 3}


@pytest.fixture()
def quota_app(gateway_settings):
    quotas = DesignerQuotas(
        sweeps_in_flight=2, tunes_in_flight=1, games_in_flight=100, bot_iterations_per_game=500, max_chunks=50
    )
    app = create_app(replace(gateway_settings, quotas=quotas))
    redis = app.extensions["cultists"].redis
    forget_gateway_keys(redis, gateway_settings.task_broker_url)
    yield app
    forget_gateway_keys(redis, gateway_settings.task_broker_url)
    app.extensions["cultists"].close()


def _refused(reply, status: int, code: str, quota: str | None = None) -> dict:
    assert reply.status_code == status, reply.get_json()
    error = reply.get_json()["error"]
    assert error["code"] == code
    if quota is not None:
        assert error["quota"] == quota and quota in error["message"] and "limit" in error
    return error


def _queued(redis) -> tuple[int, int]:
    return redis.zcard(INDEX), redis.llen(control.QUEUE)


def test_sweeps_in_flight_are_capped_per_designer(quota_app):
    client = quota_app.test_client()
    redis = quota_app.extensions["cultists"].redis
    ada, bo = session_of(client, redis, "designer"), session_of(client, redis, "designer")
    ids = [client.post("/api/sweeps", json=SWEEP, headers=ada).get_json()["id"] for _ in range(2)]
    before = _queued(redis)
    third = client.post("/api/sweeps", json=SWEEP, headers=ada)
    _refused(third, 429, "quota_exceeded", "sweeps_in_flight")
    assert third.headers["Retry-After"] and _queued(redis) == before  # nothing planned or queued
    assert client.post("/api/sweeps", json=SWEEP, headers=bo).status_code == 202  # another designer's own
    client.post(f"/api/sweeps/{ids[0]}/cancel", headers=ada)
    assert client.post("/api/sweeps", json=SWEEP, headers=ada).status_code == 202  # room again


def test_games_in_flight_count_every_sweep_of_the_designer(quota_app):
    client = quota_app.test_client()
    redis = quota_app.extensions["cultists"].redis
    ada = session_of(client, redis, "designer")
    assert client.post("/api/sweeps", json={**SWEEP, "games": 60}, headers=ada).status_code == 202
    before = _queued(redis)
    error = _refused(
        client.post("/api/sweeps", json={**SWEEP, "games": 60}, headers=ada),
        429,
        "quota_exceeded",
        "games_in_flight",
    )
    assert error["limit"] == 100 and _queued(redis) == before


def test_search_per_game_is_capped_and_ismcts_defaults_count(quota_app):
    client = quota_app.test_client()
    redis = quota_app.extensions["cultists"].redis
    ada = session_of(client, redis, "designer")
    before = _queued(redis)
    heavy = {**SWEEP, "lineups": [["ismcts:iterations=300", "ismcts"]]}  # 300 + the default 200 ... ok
    assert client.post("/api/sweeps", json=heavy, headers=ada).status_code == 202
    too_heavy = {**SWEEP, "lineups": [["ismcts:iterations=300", "ismcts:iterations=201"]]}
    error = _refused(
        client.post("/api/v1/sweeps", json=too_heavy, headers=ada),
        403,
        "over_quota",
        "bot_iterations_per_game",
    )
    assert "501 iterations" in error["message"]
    assert _queued(redis)[0] == before[0] + 1  # only the first was taken


def test_a_huge_spec_is_refused_from_its_numbers_before_any_plan(quota_app):
    """Ten grid fields of ten values are 10^10 cells: refused before one is built; and chunk
    counts over the cap name `chunk`. Nothing is written."""
    client = quota_app.test_client()
    redis = quota_app.extensions["cultists"].redis
    ada = session_of(client, redis, "designer")
    before = _queued(redis)
    grid = {f"field_{i}": list(range(10)) for i in range(10)}
    error = _refused(
        client.post("/api/sweeps", json={**SWEEP, "grid": grid}, headers=ada), 400, "invalid_spec"
    )
    assert error["field"] == "grid" and "10,000,000,000 cells" in error["message"]
    huge = {**SWEEP, "games": 50_000_000, "chunk": 1}
    error = _refused(client.post("/api/sweeps", json=huge, headers=ada), 400, "invalid_spec")
    assert error["field"] == "chunk" and "queues at most 50" in error["message"]
    assert _queued(redis) == before


def test_tunes_in_flight_are_capped(quota_app):
    client = quota_app.test_client()
    redis = quota_app.extensions["cultists"].redis
    ada = session_of(client, redis, "designer")
    tune = {"name": "quota", **SMALL_CC_TUNE, "budget": 60}
    assert client.post("/api/tunes", json=tune, headers=ada).status_code == 202
    _refused(client.post("/api/tunes", json=tune, headers=ada), 429, "quota_exceeded", "tunes_in_flight")
    big = session_of(client, redis, "designer")
    _refused(
        client.post("/api/tunes", json={**tune, "budget": 240}, headers=big),
        429,
        "quota_exceeded",
        "games_in_flight",
    )
