"""The per-shard indexes (open, live, deadlines) behind the lobby and the timers: the lobby
pages through them without reading the whole list, and a process that died between a
table's commit and its index update leaves nothing the reconciler does not put back. Run
on a single Redis and on the 3-master cluster (the package's `live_store`)."""

from __future__ import annotations

from urllib.parse import quote

from services.platform.keys import index_key, shard_of, table_key

from .conftest import bearer

CRAZY = "crazy_cultists"
TWO = {"two_players": True}  # Crazy Cultists seats 2 only behind its sweep-variant switch (CC-2)


def _open(client) -> str:
    reply = client.post("/api/tables", json={"game": CRAZY, "players": 2, "config": TWO})
    assert reply.status_code == 201, reply.get_json()
    return reply.get_json()["table"]


def test_the_lobby_pages_through_every_waiting_table_once_newest_first(client):
    opened = [_open(client) for _ in range(7)]
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        query = "/api/tables?limit=3" + (f"&cursor={cursor}" if cursor else "")
        body = client.get(query).get_json()
        assert body["total"] == 7, "every page counts the whole list"
        assert len(body["tables"]) <= 3
        seen += [t["table"] for t in body["tables"]]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            break
        assert pages < 5, "the pages end"
    assert pages == 3
    assert seen == opened[::-1], "each table once, newest first"


def test_previous_pages_lead_back_to_the_first_one_page_at_a_time(client):
    """`previous` of a page is the `cursor` of the page above it: back from the last page
    the pages are those seen going forward, and the first has no previous. One parameter
    walks both ways, so no schema-valid pair of parameters is refused."""
    [_open(client) for _ in range(7)]
    forward = []
    body = client.get("/api/tables?limit=3").get_json()
    assert body["previous"] is None, "nothing comes before the first page"
    while True:
        forward.append(([t["table"] for t in body["tables"]], body))
        if body["next"] is None:
            break
        body = client.get(f"/api/tables?limit=3&cursor={body['next']}").get_json()
    back = [forward[-1][0]]
    body = forward[-1][1]
    while body["previous"] is not None:
        assert body["previous"].startswith("<"), "a way back, not a way on"
        body = client.get(f"/api/tables?limit=3&cursor={quote(body['previous'])}").get_json()
        assert body["total"] == 7
        back.append([t["table"] for t in body["tables"]])
        assert len(back) <= len(forward), "the pages end"
    assert back[::-1] == [ids for ids, _ in forward]
    # The old second parameter is no parameter at all.
    assert client.get(f"/api/tables?before={quote(forward[1][1]['previous'])}").status_code == 400


def test_a_malformed_lobby_cursor_is_refused_naming_it(client):
    _open(client)
    reply = client.get("/api/tables?cursor=not-a-cursor")
    assert reply.status_code == 400
    assert "cursor" in reply.get_data(as_text=True)


def test_a_started_table_whose_index_update_was_lost_is_refiled_with_its_deadline(app, client):
    gw = app.extensions["cultists"]
    tid = _open(client)
    for seat in (0, 1):
        assert client.post(f"/api/tables/{tid}/seats/{seat}").status_code in (200, 201)
    shard = shard_of(tid)
    due = gw.redis.hget(table_key(tid), "due")
    assert due, "a started table has a seat to act and so a deadline"
    # As a process killed after the table's commit and before its filing would leave it:
    # still listed as open, not live, and under no deadline.
    gw.redis.zrem(index_key(shard, f"live:{CRAZY}"), tid)
    gw.redis.zrem(index_key(shard, "deadlines"), tid)
    gw.redis.zadd(index_key(shard, f"open:{CRAZY}"), {tid: 1.0})

    fixed = gw.store.reconcile()

    assert fixed["started"] == 1
    assert gw.redis.zscore(index_key(shard, "deadlines"), tid) == float(due)
    assert gw.redis.zscore(index_key(shard, f"live:{CRAZY}"), tid) is not None
    assert gw.redis.zscore(index_key(shard, f"open:{CRAZY}"), tid) is None
    assert gw.store.reconcile() == {"gone": 0, "started": 0, "finished": 0, "deadlines": 0}, "idempotent"


def test_a_live_table_that_lost_only_its_deadline_gets_it_back(app, client):
    gw = app.extensions["cultists"]
    tid = _open(client)
    for seat in (0, 1):
        client.post(f"/api/tables/{tid}/seats/{seat}")
    shard = shard_of(tid)
    due = float(gw.redis.hget(table_key(tid), "due"))
    gw.redis.zrem(index_key(shard, "deadlines"), tid)

    assert gw.store.reconcile()["deadlines"] == 1
    assert gw.redis.zscore(index_key(shard, "deadlines"), tid) == due


def _seated(client) -> tuple[str, list[str]]:
    tid = _open(client)
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    return tid, tokens


def _move(client, tid: str, tokens: list[str]) -> None:
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    headers = bearer(tokens[seat])
    legal = client.get(f"/api/tables/{tid}/legal", headers=headers).get_json()
    body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
    reply = client.post(f"/api/tables/{tid}/actions", json=body, headers=headers)
    assert reply.status_code == 200, reply.get_json()


def test_a_move_that_puts_the_deadline_off_leaves_the_earlier_score_and_the_beat_lifts_it(app, client):
    """A move files its deadline only when it comes sooner: the index may run early, never
    late. The beat, finding the early score passed with nobody past their time, files the
    table at its own deadline and moves nobody; the reconciler leaves an early score be."""
    gw = app.extensions["cultists"]
    tid, tokens = _seated(client)
    key = index_key(shard_of(tid), "deadlines")
    filed = gw.redis.zscore(key, tid)
    version = int(gw.redis.hget(table_key(tid), "version"))
    _move(client, tid, tokens)
    due = float(gw.redis.hget(table_key(tid), "due"))
    assert due > filed, "the next seat's time starts at the move"
    assert gw.redis.zscore(key, tid) == filed, "a later deadline is not filed"
    assert gw.store.reconcile()["deadlines"] == 0, "an early score is no fault"

    assert gw.tables.enforce_deadlines((filed + due) / 2) == 0, "nobody is past their time"
    assert int(gw.redis.hget(table_key(tid), "version")) == version + 1
    assert gw.redis.zscore(key, tid) == due, "filed at the table's own deadline"


def test_a_deadline_score_later_than_the_table_is_put_back(app, client):
    gw = app.extensions["cultists"]
    tid, _ = _seated(client)
    key = index_key(shard_of(tid), "deadlines")
    due = float(gw.redis.hget(table_key(tid), "due"))
    gw.redis.zadd(key, {tid: due + 600})

    assert gw.store.reconcile()["deadlines"] == 1
    assert gw.redis.zscore(key, tid) == due


def test_lifting_an_early_score_never_files_past_a_sooner_deadline_a_move_wrote(app, client):
    """The race the beat's lift has with a move: the beat read the table's deadline, a move
    then committed a sooner one (and filed it), then the beat lifts the score to what it
    read. It reads the record again after lifting and files the sooner deadline."""
    gw = app.extensions["cultists"]
    tid, _ = _seated(client)
    key = index_key(shard_of(tid), "deadlines")
    due = gw.redis.hget(table_key(tid), "due").decode()
    read_by_the_beat = f"{float(due) + 300:.3f}"  # the deadline as it was when the beat read it
    gw.redis.zadd(key, {tid: float(due)})  # filed by the move that made it `due`

    gw.store.refile_early(tid, read_by_the_beat)

    assert gw.redis.zscore(key, tid) == float(due)
