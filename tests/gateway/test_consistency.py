"""Compare-and-set: of two moves made at one version exactly one is applied."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest
from werkzeug.serving import make_server

from services.engines.registry import available_games
from services.platform.keys import table_key
from services.platform.packing import unpack_actions, unpack_legal

from .conftest import bearer
from .support import stored, two_player_config

GAME = available_games()[0]
TWO = two_player_config(GAME)  # its tables here seat 2


def _moves(redis, tid: str) -> list[list[int]]:
    """The table's recorded actions, straight from its record's `acts` field."""
    return unpack_actions(redis.hget(table_key(tid), "acts"))


@pytest.fixture()
def server(app):
    """The app on a real threaded HTTP server, so requests truly run at the same time."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def _post(url: str, body: dict, token: str) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", **bearer(token)},
    )  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as err:
        assert err.code != 409 or json.loads(err.read())["error"]["code"] == "stale_version"
        return err.code


def _race(url: str, version: int, token: str, actions: list[int]) -> list[int]:
    """Send the moves at the same instant (a barrier releases every thread at once)."""
    barrier = threading.Barrier(len(actions))
    statuses: list[int] = []

    def move(action: int) -> None:
        barrier.wait()
        statuses.append(_post(url, {"action": action, "version": version}, token))

    threads = [threading.Thread(target=move, args=(a,)) for a in actions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_two_moves_on_one_version_one_wins(server, client, app):
    redis = app.extensions["cultists"].redis
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seed": 1}).get_json()[
        "table"
    ]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    for _round in range(12):
        version, _ = stored(redis, tid)
        public = client.get(f"/api/tables/{tid}/view").get_json()
        if public["terminal"]:
            break
        seat = public["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()[
            "legal_actions"
        ]
        choices = [legal[0]["id"], legal[-1]["id"]]
        moves_before = len(_moves(redis, tid))
        statuses = _race(f"{server}/api/tables/{tid}/actions", version, tokens[seat], choices)
        assert sorted(statuses) == [200, 409]
        assert stored(redis, tid)[0] == version + 1, "the state advanced exactly once"
        assert len(_moves(redis, tid)) == moves_before + 1, "one action recorded"


def test_commit_refuses_a_second_write_at_the_same_version(client, app):
    """The same race at the store itself: the Lua compare-and-set, not the early check."""
    gw = app.extensions["cultists"]
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seed": 2}).get_json()[
        "table"
    ]
    for s in (0, 1):
        client.post(f"/api/tables/{tid}/seats/{s}")
    table = gw.tables.get(tid)
    seat = table.to_act[0]
    legal = gw.engines.view(GAME, table.state, seat).legal_actions
    first = gw.engines.apply(GAME, table.state, seat, legal[0].id)
    second = gw.engines.apply(GAME, table.state, seat, legal[-1].id)
    first_legal = gw.engines.legal_json(GAME, first, 2)
    second_legal = [b"[]", b"[]"]  # anything else: a refused commit must not write it
    assert first_legal != second_legal
    moved = table.version + 1
    assert gw.store.commit(table, seat, legal[0].id, first, [], first_legal, 0.0) == (1, moved, -1)
    assert gw.store.commit(table, seat, legal[-1].id, second, [], second_legal, 0.0) == (0, moved, -1)
    after = gw.tables.get(tid)
    assert after.state == first.state and gw.store.actions(tid) == [[seat, legal[0].id]]
    assert [unpack_legal(s.legal or b"") for s in after.seats] == first_legal, "the refused write left none"
