"""Cross-site writes and security headers (issue 27, item 6), on the real app: a write a
browser marks as another site's is 403 `cross_site` and changes nothing, whether it is a
form post or a bodiless one; the configured CORS origins and non-browser clients pass;
every response carries the CSP (no inline script, `frame-ancestors 'none'`), nosniff and
Referrer-Policy."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.gateway import create_app
from tests.support.staff import session_of

from .conftest import forget_gateway_keys

GAME = "trash_cult"
EVIL = "https://evil.example"
FROM_EVIL = {"Origin": EVIL, "Sec-Fetch-Site": "cross-site"}


def _table(client) -> str:
    reply = client.post("/api/tables", json={"game": GAME, "players": 2})
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()["table"]


def _free(client, tid: str) -> list[bool]:
    return [not s["claimed"] for s in client.get(f"/api/tables/{tid}").get_json()["seats"]]


@pytest.mark.parametrize(
    "headers",
    [
        FROM_EVIL,  # every current browser
        {"Origin": EVIL},  # an older one: Origin only
        {"Origin": "null", "Sec-Fetch-Site": "cross-site"},  # a sandboxed frame or data: page
        {"Origin": "null"},
        {"Sec-Fetch-Site": "same-site", "Origin": "https://other.127.0.0.1.example"},
    ],
)
def test_a_cross_site_form_post_takes_no_seat(client, headers):
    tid = _table(client)
    before = _free(client, tid)
    form = client.post(f"/api/tables/{tid}/seats/0", data={"player": "x"}, headers=headers)
    assert form.status_code == 403 and form.get_json()["error"]["code"] == "cross_site"
    bodiless = client.post(f"/api/tables/{tid}/seats/1", headers=headers)
    assert bodiless.status_code == 403 and bodiless.get_json()["error"]["code"] == "cross_site"
    assert _free(client, tid) == before == [True, True]


def test_a_cross_site_cancel_is_refused_even_with_an_operators_session(client, app):
    """A page on another site that somehow holds a token still cannot post from there."""
    redis = app.extensions["cultists"].redis
    operator = session_of(client, redis, "operator")
    sweep = client.post(
        "/api/sweeps", json={"game": GAME, "players": [2], "games": 4, "chunk": 2}, headers=operator
    ).get_json()["id"]
    reply = client.post(f"/api/sweeps/{sweep}/cancel", headers={**operator, **FROM_EVIL})
    assert reply.status_code == 403 and reply.get_json()["error"]["code"] == "cross_site"
    assert client.get(f"/api/sweeps/{sweep}", headers=operator).get_json()["status"] == "queued"


@pytest.mark.parametrize(
    "headers",
    [
        {},  # curl, the SDKs, the bench: not a browser page
        {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"},
        {"Sec-Fetch-Site": "none"},  # typed into the address bar
        {"Origin": "http://localhost"},  # this gateway's own host (the test client's)
    ],
)
def test_same_origin_and_non_browser_writes_pass(client, headers):
    tid = _table(client)
    assert client.post(f"/api/tables/{tid}/seats/0", headers=headers).status_code == 201


def test_the_configured_cors_origins_may_write(gateway_settings):
    app = create_app(replace(gateway_settings, cors_origins=("https://app.example",)))
    try:
        client = app.test_client()
        tid = _table(client)
        ok = client.post(
            f"/api/tables/{tid}/seats/0",
            headers={"Origin": "https://app.example", "Sec-Fetch-Site": "cross-site"},
        )
        assert ok.status_code == 201
        assert client.post(f"/api/tables/{tid}/seats/1", headers=FROM_EVIL).status_code == 403
    finally:
        forget_gateway_keys(app.extensions["cultists"].redis, gateway_settings.task_broker_url)
        app.extensions["cultists"].close()


def test_reads_are_not_checked(client):
    assert client.get("/api/games", headers=FROM_EVIL).status_code == 200


def _policy(reply) -> dict[str, str]:
    raw = reply.headers["Content-Security-Policy"]
    return {part.split()[0]: part.strip() for part in raw.split(";") if part.strip()}


@pytest.mark.parametrize(
    "path", ["/", "/api/games", "/account", "/designer", "/ops", "/no-such-page", "/api/openapi.json"]
)
def test_every_response_carries_the_security_headers(client, path):
    reply = client.get(path)
    policy = _policy(reply)
    assert policy["frame-ancestors"] == "frame-ancestors 'none'"
    assert (
        policy["script-src"] == "script-src 'self'"
        and "unsafe-inline" not in reply.headers["Content-Security-Policy"]
    )
    assert policy["object-src"] == "object-src 'none'"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["Referrer-Policy"] == "same-origin"
    assert reply.headers["X-Frame-Options"] == "DENY"


def test_a_table_page_and_an_error_carry_them_too(client):
    tid = _table(client)
    for reply in (client.get(f"/tables/{tid}"), client.post("/api/tables", json={"game": "chess"})):
        assert "frame-ancestors 'none'" in reply.headers["Content-Security-Policy"]
        assert reply.headers["X-Content-Type-Options"] == "nosniff"
