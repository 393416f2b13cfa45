"""What only a Redis Cluster can show: tables spread over the masters, and a master killed
mid-play costs 503s with Retry-After (never a 500) and never applies a move twice.
(Everything else of live play runs on a cluster too: the whole package runs on both.)"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import replace

import pytest

from services.gateway import create_app
from services.platform.keys import table_key
from services.platform.packing import unpack_actions
from services.runtime.embedded_cluster import start_cluster

from .conftest import bearer

GAME = "crazy_cultists"
TWO = {"two_players": True}


def test_a_thousand_tables_spread_over_the_masters(live_store, app):
    """Over 1,000 tables each of the 3 masters holds 20-45% of them (the ids are random
    and a table's hash tag is its id). Written through the store itself: what is measured
    is where the keys land, not how fast tables open."""
    if not live_store.cluster:
        pytest.skip("one Redis holds every table")
    gw = app.extensions["cultists"]
    ids = [f"{i:016x}" for i in range(1000)]
    record = {"game": GAME, "players": 2, "status": "waiting", "to_act": "[]", "decision_seconds": 60,
              "kind:0": "human", "kind:1": "human"}  # fmt: skip
    for table_id in ids:
        assert gw.store.create(table_id, record, {"kind": "created"}, time.time(), expire=600)
    owners = Counter(gw.redis.get_node_from_key(table_key(t)).name for t in ids)
    assert len(owners) == 3
    assert all(200 <= n <= 450 for n in owners.values()), owners
    assert gw.store.count("waiting", GAME) == 1000


@pytest.fixture()
def own_cluster():
    """A cluster of this test's own, keeping its data (append-only files) across a node's
    restart, as a real one does: the session's cluster serves every other test."""
    cluster = start_cluster(3, persist=True)
    yield cluster
    cluster.stop()


def test_a_master_killed_mid_play_is_503_and_no_move_twice(live_store, gateway_settings, own_cluster):
    if not live_store.cluster:
        pytest.skip("a single Redis down is tests/gateway/test_outages.py")
    settings = replace(gateway_settings, redis_url=own_cluster.url, redis_wait_seconds=2.0)
    app = create_app(settings)
    gw = app.extensions["cultists"]
    client = app.test_client()
    try:
        tables = []
        for _ in range(6):  # on every master, most likely
            tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()[
                "table"
            ]
            tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
            tables.append((tid, tokens))
        victim = gw.redis.get_node_from_key(table_key(tables[0][0])).port
        index = next(i for i, n in enumerate(own_cluster.nodes) if n.port == victim)
        statuses: Counter[int] = Counter()
        applied: dict[str, int] = {tid: 0 for tid, _ in tables}
        stop = threading.Event()

        def play() -> None:
            while not stop.is_set():
                for tid, tokens in tables:
                    reply = client.get(f"/api/tables/{tid}")
                    statuses[reply.status_code] += 1
                    if reply.status_code != 200 or reply.get_json()["status"] != "playing":
                        continue
                    table = reply.get_json()
                    seat = table["to_act"][0]
                    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat]))
                    statuses[legal.status_code] += 1
                    if legal.status_code != 200 or not legal.get_json()["legal_actions"]:
                        continue
                    body = {"action": legal.get_json()["legal_actions"][0]["id"], "version": table["version"]}
                    move = client.post(f"/api/tables/{tid}/actions", json=body, headers=bearer(tokens[seat]))
                    statuses[move.status_code] += 1
                    if move.status_code == 503:
                        assert move.headers["Retry-After"].isdigit()
                    if move.status_code == 200:
                        applied[tid] += 1

        player = threading.Thread(target=play, daemon=True)
        player.start()
        time.sleep(1.0)
        own_cluster.restart(index)  # SIGKILL, then the same node back from its files
        time.sleep(1.0)
        stop.set()
        player.join(timeout=60)
        assert not player.is_alive()
        assert statuses[500] == 0, statuses
        assert statuses[503] > 0, f"the dead master was asked meanwhile: {statuses}"
        assert statuses[200] > 0, statuses
        for tid, _ in tables:
            # Each acknowledged move is in the record once: the version counts them all
            # (a move whose reply was lost may be in it too, never one twice).
            version = int(gw.redis.hget(table_key(tid), "version"))
            actions = len(unpack_actions(gw.redis.hget(table_key(tid), "acts")))
            assert version == actions >= applied[tid], (tid, version, actions, applied[tid])
    finally:
        gw.close()
