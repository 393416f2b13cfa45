"""Finished tables leave Redis after their grace period and read back the same from the
archive (issue 28 item 4), and an archiver killed between writing and deleting loses
nothing and duplicates nothing. Real Redis (and cluster), real engines, real Parquet."""

from __future__ import annotations

import re

import pyarrow.parquet as pq

from services.platform.archive import Archiver
from services.platform.keys import ARCHIVE_PLAN, actions_key, log_chunks_key, log_key, table_key

from .support import wait_for

GAME = "crazy_cultists"
TWO = {"two_players": True}


def _finished_table(client) -> str:
    seats = [{"kind": "bot", "bot": "random"}] * 2
    tid = client.post(
        "/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seats": seats}
    ).get_json()["table"]
    wait_for(
        lambda: client.get(f"/api/tables/{tid}").get_json()["status"] == "finished",
        timeout=60,  # a random 2-player game is ~100 bot moves; generous for a busy machine
        what="the bots' game to end",
    )
    return tid


def _seen(client, tid: str) -> dict:
    """Everything a reader asks of a finished table."""
    return {
        "table": client.get(f"/api/tables/{tid}").get_json(),
        "replay": client.get(f"/api/tables/{tid}/replay").get_json(),
        "events": client.get(f"/api/tables/{tid}/events?limit=1000").get_json(),
        "view": client.get(f"/api/tables/{tid}/view").get_json(),
        # The panel says when it was made (data-now): the rest of it must be the same.
        "past": re.sub(
            r'data-now="[^"]*"', "", client.get(f"/tables/{tid}/panel?at=3").get_data(as_text=True)
        ),
    }


def _files_holding(archiver: Archiver, tid: str) -> int:
    return sum(
        pq.read_table(path, columns=["table"]).column("table").to_pylist().count(tid)
        for path in archiver.archive.root.glob("*.parquet")
    )


def test_a_finished_table_leaves_redis_and_reads_the_same(client, app, table_worker):
    gw = app.extensions["cultists"]
    tid = _finished_table(client)
    before = _seen(client, tid)
    assert gw.store.blocks.path(tid).exists(), "its older log lines were sealed to its file"
    archiver = Archiver(gw.redis, gw.store.archive, gw.store.games, grace=3600)
    assert archiver.run() == 0, "within its grace period a finished table stays"
    archiver.grace = 0
    assert archiver.run() == 1
    keys = (table_key(tid), log_key(tid), log_chunks_key(tid), actions_key(tid))
    assert not gw.redis.exists(*keys), "0 bytes of Redis left"
    assert not gw.store.blocks.path(tid).exists(), "its sealed blocks are in the archive's row now"
    assert gw.store.count("finished", GAME) == 0
    assert _seen(client, tid) == before
    assert f'data-table="{tid}"' in client.get("/replays").get_data(as_text=True)
    assert archiver.run() == 0 and _files_holding(archiver, tid) == 1


def test_an_archiver_killed_after_writing_loses_and_duplicates_nothing(client, app, table_worker):
    gw = app.extensions["cultists"]
    tid = _finished_table(client)
    before = _seen(client, tid)
    dying = Archiver(gw.redis, gw.store.archive, gw.store.games, grace=0)
    batch_id, ids = dying.plan(now=2e9, batch=10)
    dying.write(batch_id, ids)  # ... and dies here, before deleting anything
    assert gw.redis.exists(table_key(tid)) and gw.redis.exists(ARCHIVE_PLAN)
    assert Archiver(gw.redis, gw.store.archive, gw.store.games, grace=0).run() == 1
    assert not gw.redis.exists(table_key(tid), ARCHIVE_PLAN)
    assert _files_holding(dying, tid) == 1
    assert _seen(client, tid) == before


def test_an_archiver_killed_before_writing_writes_once(client, app, table_worker):
    gw = app.extensions["cultists"]
    tid = _finished_table(client)
    dying = Archiver(gw.redis, gw.store.archive, gw.store.games, grace=0)
    dying.plan(now=2e9, batch=10)  # ... and dies here, its plan recorded, no file yet
    assert Archiver(gw.redis, gw.store.archive, gw.store.games, grace=0).run() == 1
    assert _files_holding(dying, tid) == 1 and not gw.redis.exists(table_key(tid))
    assert client.get(f"/api/tables/{tid}").get_json()["status"] == "finished"
