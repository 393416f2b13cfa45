"""Who may do what (issue 27, item 1): designers' and operators' routes refuse anonymous
and guest clients (401/403) before they read or plan anything; a sweep or tune has an
owner, and only its owner or an operator cancels it; /metrics answers operators and the
scraper's token. Against the real app on one Redis and on a cluster."""

from __future__ import annotations

import pytest

from services.balance.sweeps.store import INDEX
from services.gateway import create_app
from tests.support.staff import act_as, session_of
from tests.tune.specs import SMALL_CC_TUNE

from .conftest import forget_gateway_keys
from .support import sign_in_guest

SWEEP = {"game": "trash_cult", "players": [2], "games": 4, "chunk": 2, "seed": 3}
TUNE = {"name": "roles", **SMALL_CC_TUNE, "budget": 240}
DESIGNER_ROUTES = [
    ("post", "/api/sweeps"),
    ("get", "/api/sweeps"),
    ("get", "/api/sweeps/0123456789abcdef"),
    ("post", "/api/sweeps/0123456789abcdef/cancel"),
    ("get", "/api/sweeps/0123456789abcdef/result"),
    ("get", "/api/sweeps/0123456789abcdef/report"),
    ("get", "/api/sweeps/0123456789abcdef/replays/cell-0.json"),
    ("post", "/api/tunes"),
    ("get", "/api/tunes"),
    ("get", "/api/tunes/0123456789abcdef"),
    ("post", "/api/tunes/0123456789abcdef/cancel"),
    ("get", "/api/tunes/0123456789abcdef/report"),
    ("get", "/api/tunes/0123456789abcdef/plots/a.png"),
    ("post", "/api/cards"),
    ("get", "/api/cards/0123456789abcdef"),
    ("get", "/designer/data/nightly"),
]
OPERATOR_ROUTES = [("get", "/ops/data/alerts"), ("get", "/ops/data/panels/moves"), ("get", "/metrics")]


def _both(routes):
    """Each route, and its /api/v1 spelling where it has one."""
    out = []
    for method, path in routes:
        out.append((method, path))
        if path.startswith("/api/"):
            out.append((method, "/api/v1/" + path[len("/api/") :]))
    return out


def _code(reply) -> str:
    return reply.get_json()["error"]["code"]


@pytest.mark.parametrize(("method", "path"), _both(DESIGNER_ROUTES + OPERATOR_ROUTES))
def test_anonymous_and_guest_clients_are_refused(client, app, method, path):
    """401 without a session, 403 `forbidden` naming the role for a guest; nothing is queued."""
    redis = app.extensions["cultists"].redis
    sweeps = redis.zcard(INDEX)
    body = SWEEP if path.endswith("/sweeps") else TUNE if path.endswith("/tunes") else None
    anonymous = getattr(client, method)(path, json=body)
    assert anonymous.status_code == 401 and _code(anonymous) == "sign_in_required", anonymous.get_json()
    guest = sign_in_guest(client, "visitor")
    refused = getattr(client, method)(path, json=body, headers=guest["headers"])
    assert refused.status_code == 403 and _code(refused) == "forbidden"
    role = "operator" if (method, path) in _both(OPERATOR_ROUTES) else "designer"
    assert refused.get_json()["error"]["role"] == role
    assert redis.zcard(INDEX) == sweeps


def test_a_designer_is_not_an_operator(client, app):
    headers = session_of(client, app.extensions["cultists"].redis, "designer")
    for _, path in OPERATOR_ROUTES:
        reply = client.get(path, headers=headers)
        assert reply.status_code == 403 and reply.get_json()["error"]["role"] == "operator"


def test_only_the_owner_or_an_operator_cancels_a_sweep(client, app):
    redis = app.extensions["cultists"].redis
    owner = session_of(client, redis, "designer")
    other = session_of(client, redis, "designer")
    operator = session_of(client, redis, "operator")
    first = client.post("/api/sweeps", json=SWEEP, headers=owner)
    assert first.status_code == 202, first.get_json()
    sweep_id = first.get_json()["id"]
    assert redis.hget(f"cultists:sweep:{{{sweep_id}}}:meta", "owner") is not None
    refused = client.post(f"/api/sweeps/{sweep_id}/cancel", headers=other)
    assert refused.status_code == 403 and _code(refused) == "not_owner"
    assert client.get(f"/api/sweeps/{sweep_id}", headers=other).get_json()["status"] == "queued"
    assert client.post(f"/api/sweeps/{sweep_id}/cancel", headers=owner).status_code == 200
    second = client.post("/api/sweeps", json=SWEEP, headers=owner).get_json()["id"]
    reply = client.post(f"/api/v1/sweeps/{second}/cancel", headers=operator)
    assert reply.status_code == 200 and reply.get_json()["status"] == "cancelled"


def test_only_the_owner_or_an_operator_cancels_a_tune(client, app):
    redis = app.extensions["cultists"].redis
    owner = session_of(client, redis, "designer")
    other = session_of(client, redis, "designer")
    operator = session_of(client, redis, "operator")
    made = client.post("/api/tunes", json=TUNE, headers=owner)
    assert made.status_code == 202, made.get_json()
    tune_id = made.get_json()["id"]
    refused = client.post(f"/api/tunes/{tune_id}/cancel", headers=other)
    assert refused.status_code == 403 and _code(refused) == "not_owner"
    assert client.post(f"/api/tunes/{tune_id}/cancel", headers=operator).status_code == 200


def test_a_signed_report_link_opens_only_its_own_sweep(client, app):
    """The designers' list hands out report links a browser follows without a session;
    each opens its own sweep's reports only, and a forged one is refused."""
    redis = app.extensions["cultists"].redis
    designer = session_of(client, redis, "designer")
    ids = [client.post("/api/sweeps", json=SWEEP, headers=designer).get_json()["id"] for _ in range(2)]
    rows = {r["id"]: r for r in client.get("/api/sweeps", headers=designer).get_json()["sweeps"]}
    link = rows[ids[0]]["links"]["report"]
    assert client.get(link).status_code == 202  # still queued: its progress, no session needed
    key = link.split("?", 1)[1]
    assert client.get(f"/api/sweeps/{ids[1]}/report?{key}").status_code == 401
    assert client.get(f"/api/sweeps/{ids[0]}?{key}").status_code == 401  # reports only
    forged = key[:-1] + ("0" if key[-1] != "0" else "1")
    assert client.get(f"/api/sweeps/{ids[0]}/report?{forged}").status_code == 401


def test_metrics_answer_operators_and_the_scrape_token(gateway_settings):
    from dataclasses import replace

    app = create_app(replace(gateway_settings, metrics_token="scrape-secret-1"))
    try:
        client = app.test_client()
        redis = app.extensions["cultists"].redis
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        scraped = client.get("/metrics", headers={"Authorization": "Bearer scrape-secret-1"})
        assert scraped.status_code == 200 and b"cultists_gateway" in scraped.data
        assert act_as(client, redis, "operator").get("/metrics").status_code == 200
    finally:
        forget_gateway_keys(app.extensions["cultists"].redis, gateway_settings.task_broker_url)
        app.extensions["cultists"].close()


def test_the_me_route_says_the_roles(client, app):
    headers = session_of(client, app.extensions["cultists"].redis, "operator")
    assert client.get("/api/players/me", headers=headers).get_json()["roles"] == [
        "operator",
        "designer",
        "player",
    ]
    guest = sign_in_guest(client, "plain")
    assert client.get("/api/players/me", headers=guest["headers"]).get_json()["roles"] == ["player"]
