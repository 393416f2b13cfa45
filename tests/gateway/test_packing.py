"""A live table's packed values (services/platform/packing.py): what readers get back is
what was written, and a table written before packing still plays and replays."""

from __future__ import annotations

import re
import zlib

import orjson
import pytest

from services.engines.registry import available_games
from services.platform.keys import actions_key, log_chunks_key, log_key, table_key
from services.platform.packing import (
    ACTS_MARK,
    CHUNK_LINES,
    LOG_BLOCK,
    pack_action,
    pack_legal,
    pack_log_chunk,
    pack_log_line,
    pack_state,
    unpack_actions,
    unpack_legal,
    unpack_log_chunk,
    unpack_log_line,
    unpack_state,
)
from services.platform.store import TableStore, lua_source

from .conftest import bearer
from .support import two_player_config

GAME = available_games()[0]
TWO = two_player_config(GAME)


def test_packed_values_unpack_to_what_was_packed_and_old_ones_read_as_they_are():
    state = b'{"hands":[[1,2],[3]],"turn":4}\n#mac:' + b"ab" * 32
    line = orjson.dumps({"kind": "play", "seat": 1, "text": "seat 1 plays Ü", "payload": {}, "at": 1.5})
    assert unpack_state(pack_state(state)) == state and len(pack_state(state)) < len(state) + 12
    assert unpack_state(state) == state, "a state from before packing"
    assert unpack_log_line(pack_log_line(line)) == line and len(pack_log_line(line)) < len(line)
    assert unpack_log_line(line) == line, "a log line from before packing"
    moves = ACTS_MARK + pack_action(0, 12) + pack_action(3, 2**31 - 1) + pack_action(15, 600)
    assert unpack_actions(moves) == [[0, 12], [3, 2**31 - 1], [15, 600]] and unpack_actions(ACTS_MARK) == []
    assert len(pack_action(2, 600)) == 2, "a move of a few hundred actions' game: two bytes"
    text = pack_action(0, 12, binary=False) + pack_action(3, 7, binary=False)
    assert unpack_actions(text) == [[0, 12], [3, 7]] and unpack_actions(b"") == [], "a table from before"
    legal = orjson.dumps([{"id": i, "label": f"play card {i} on seat 2", "kind": "play"} for i in range(40)])
    assert unpack_legal(pack_legal(legal)) == legal and len(pack_legal(legal)) < len(legal) // 4
    assert pack_legal(b"[]") == b"[]" and unpack_legal(b"[]") == b"[]" and unpack_legal(b"") == b""
    lines = [
        orjson.dumps({"kind": "play", "text": f"seat {i % 4} plays\nÜ", "at": 1.5 + i}) for i in range(16)
    ]
    chunk = pack_log_chunk(lines)
    assert unpack_log_chunk(chunk) == lines and len(chunk) < sum(len(pack_log_line(x)) for x in lines) // 2


def test_the_commit_script_seals_blocks_of_the_same_size_as_the_store():
    found = re.search(r"local BLOCK = (\d+)", lua_source("commit"))
    assert found is not None and int(found.group(1)) == LOG_BLOCK


def _playing(client) -> tuple[str, list[str]]:
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    return tid, tokens


def _move(client, tid: str, tokens: list[str]) -> dict:
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
    reply = client.post(f"/api/tables/{tid}/actions", json=body, headers=bearer(tokens[seat]))
    assert reply.status_code == 200, reply.get_json()
    return {"seat": seat, "action": body["action"]}


def test_a_table_written_before_packing_keeps_playing_and_its_actions_stay_whole(client, app):
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, tokens = _playing(client)
    first = _move(client, tid, tokens)
    before = client.get(f"/api/tables/{tid}/events").get_json()["events"]
    # Back to how it was stored before packing: plain state and log lines, an :actions list.
    key = table_key(tid)
    redis.hset(key, "state", unpack_state(redis.hget(key, "state")))
    old_lines = [unpack_log_line(x) for x in redis.lrange(log_key(tid), 0, -1)]
    redis.delete(log_key(tid))
    redis.rpush(log_key(tid), *old_lines)
    redis.rpush(actions_key(tid), orjson.dumps([first["seat"], first["action"]]))
    redis.hdel(key, "acts")
    assert client.get(f"/api/tables/{tid}/events").get_json()["events"] == before, (
        "old lines read as they are"
    )
    second = _move(client, tid, tokens)
    assert gw.store.actions(tid) == [[first["seat"], first["action"]], [second["seat"], second["action"]]]
    assert redis.hget(key, "acts") is None, "an old table keeps its action list"
    assert gw.tables.get(tid).version == 2
    # Its new log lines are packed, beside the old plain ones, and all read back.
    events = client.get(f"/api/tables/{tid}/events").get_json()["events"]
    assert events[: len(before)] == before and len(events) >= len(before)


def test_a_new_table_keeps_its_actions_in_its_record(client, app):
    gw = app.extensions["cultists"]
    tid, tokens = _playing(client)
    moves = [_move(client, tid, tokens) for _ in range(3)]
    assert gw.store.actions(tid) == [[m["seat"], m["action"]] for m in moves]
    assert not gw.redis.exists(actions_key(tid)), "no list of its own"
    assert gw.redis.hget(table_key(tid), "state")[:1] != b"{", "the state is packed"


def _events(client, tid: str) -> list[dict]:
    out: list[dict] = []
    while True:
        after = out[-1]["id"] if out else -1
        page = client.get(f"/api/tables/{tid}/events", query_string={"after": after, "limit": 7}).get_json()
        out += page["events"]
        if not page["more"]:
            return out


def test_the_log_sealed_in_blocks_reads_as_one_log_at_the_same_ids(client, app):
    """A live table's sealed blocks leave Redis for its file (log_blocks.py): the log reads
    as one, at the same ids, from any position."""
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, tokens = _playing(client)
    seen: list[dict] = []  # every event as the moves' answers numbered them
    while int(redis.hget(table_key(tid), "logz") or 0) < 2:
        table = client.get(f"/api/tables/{tid}").get_json()
        assert table["status"] == "playing", "the game ended before its log had two blocks"
        seat = table["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
        reply = client.post(f"/api/tables/{tid}/actions", json=body, headers=bearer(tokens[seat]))
        assert reply.status_code == 200, reply.get_json()
        seen += reply.get_json()["events"]
    blocks = int(redis.hget(table_key(tid), "logz"))
    assert redis.hget(table_key(tid), "logf") == b"1" and not redis.exists(log_chunks_key(tid))
    assert redis.llen(log_key(tid)) < LOG_BLOCK, "Redis keeps only the unsealed lines"
    assert len(gw.store.blocks.read(tid, 0, blocks)) == blocks
    log = _events(client, tid)
    assert [e["id"] for e in log] == list(range(len(log))), "ids are the whole log's positions"
    assert len(log) == blocks * LOG_BLOCK + redis.llen(log_key(tid))
    by_id = {e["id"]: e for e in log}
    assert seen and all(by_id[e["id"]] == e for e in seen), "each move's events at the ids it answered"
    assert gw.store.log(tid) == [{k: v for k, v in e.items() if k != "id"} for e in log]
    for start in (0, 1, LOG_BLOCK - 1, LOG_BLOCK, LOG_BLOCK + 3, len(log) - 1, len(log)):
        assert gw.store.log(tid, start, 5) == gw.store.log(tid)[start : start + 5], start


@pytest.mark.parametrize("where", ["file", "redis"])
def test_a_seal_happens_once_and_never_from_lines_read_before_another_seal(client, app, where):
    """Both ways a store seals: to the table's file (a store with the archive's folder, as
    the platform's), or to `:logz`'s chunks in Redis (a store without one)."""
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, tokens = _playing(client)
    store = (
        gw.store
        if where == "file"
        else TableStore(redis, gw.store.timing, gw.store.finished_ttl, gw.store.games)
    )
    before = store.log(tid)
    # The table's log unsealed and long: blocks of lines for two chunks and more (as a
    # table from before chunks, or one whose seals a crash lost, has them).
    notes = [{"kind": "note", "seat": -1, "text": f"n{i}", "payload": {}} for i in range(5 * LOG_BLOCK + 3)]
    redis.rpush(log_key(tid), *[pack_log_line(orjson.dumps(n)) for n in notes])
    whole = store.log(tid)
    assert whole == before + notes
    for blocks in range(5):
        assert store.seal(tid, blocks), blocks
        assert not store.seal(tid, blocks), "the second of two racing seals writes nothing"
        assert store.log(tid) == whole and int(redis.hget(table_key(tid), "logz")) == blocks + 1
    if where == "redis":
        assert (
            redis.llen(log_chunks_key(tid)) == 2
            and len(unpack_log_chunk(redis.lindex(log_chunks_key(tid), 0))) == CHUNK_LINES
        )
    else:
        assert not redis.exists(log_chunks_key(tid)) and redis.llen(log_key(tid)) < LOG_BLOCK
        assert [len(unpack_log_chunk(b)) for b in store.blocks.read(tid, 0, 5)] == [LOG_BLOCK] * 5
    ends = (len(whole) - 1, len(whole))
    for start in (0, 1, CHUNK_LINES - 1, CHUNK_LINES, CHUNK_LINES + 1, 5 * LOG_BLOCK, *ends):
        for count in (1, 5, None):
            want = whole[start:] if count is None else whole[start : start + count]
            assert store.log(tid, start, count) == want, (start, count)
    for count in (1, 4, LOG_BLOCK, CHUNK_LINES + 5, len(whole), len(whole) + 2):
        assert store.log_tail(tid, count) == whole[-count:], count
    # A move after seals numbers its events where the whole log ends.
    _move(client, tid, tokens)
    log = _events(client, tid)
    assert [e["id"] for e in log] == list(range(len(log))) and store.log(tid)[: len(whole)] == whole


def test_a_table_seals_one_way_from_its_first_block_to_its_end(client, app):
    """A store with a folder for blocks (the platform's) and one without (a table begun
    before blocks left Redis) never mix: each table's sealed blocks are all in its file or
    all in `:logz`, whichever store sealed its first."""
    gw = app.extensions["cultists"]
    redis = gw.redis
    in_redis = TableStore(redis, gw.store.timing, gw.store.finished_ttl, gw.store.games)
    notes = [{"kind": "note", "seat": -1, "text": f"n{i}", "payload": {}} for i in range(2 * LOG_BLOCK)]
    packed = [pack_log_line(orjson.dumps(n)) for n in notes]
    older, _ = _playing(client)  # its first block sealed in Redis
    redis.rpush(log_key(older), *packed)
    whole = gw.store.log(older)
    assert in_redis.seal(older, 0) and gw.store.seal(older, 1), "the second seal takes the first's way"
    assert redis.llen(log_chunks_key(older)) == 1 and not gw.store.blocks.path(older).exists()
    assert redis.hget(table_key(older), "logf") is None and gw.store.log(older) == whole
    newer, _ = _playing(client)  # its first block sealed to its file
    redis.rpush(log_key(newer), *packed)
    whole = gw.store.log(newer)
    assert gw.store.seal(newer, 0)
    assert not in_redis.seal(newer, 1), "a store without the folder refuses a table in a file"
    assert gw.store.seal(newer, 1) and not redis.exists(log_chunks_key(newer))
    assert len(gw.store.blocks.read(newer, 0, 2)) == 2 and gw.store.log(newer) == whole


def test_long_legal_lists_are_packed_and_legal_answers_them_whole(client, app):
    gw = app.extensions["cultists"]
    tid, tokens = _playing(client)
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    stored = gw.redis.hget(table_key(tid), f"legal:{seat}")
    assert orjson.loads(unpack_legal(stored)) == legal["legal_actions"]
    if len(unpack_legal(stored)) > 96:
        assert stored[:1] == b"\x78" and zlib.decompress(stored) == unpack_legal(stored), "packed"


def test_a_seal_a_crash_lost_is_made_by_the_next_move(client, app):
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, tokens = _playing(client)
    # Two blocks of lines unsealed, as a gateway killed between its commit and its seal
    # (twice) leaves them.
    notes = [{"kind": "note", "seat": -1, "text": f"n{i}", "payload": {}} for i in range(2 * LOG_BLOCK)]
    redis.rpush(log_key(tid), *[pack_log_line(orjson.dumps(n)) for n in notes])
    whole = gw.store.log(tid)
    assert redis.hget(table_key(tid), "logz") is None
    _move(client, tid, tokens)
    assert int(redis.hget(table_key(tid), "logz")) == 1, "the move sealed one block"
    log = _events(client, tid)
    assert [e["id"] for e in log] == list(range(len(log))) and gw.store.log(tid)[: len(whole)] == whole


def test_a_seal_killed_between_its_file_and_its_script_is_made_again_once(client, app):
    """A gateway that appended a block to the table's file and died before the script
    counted it: the next seal appends the same block again, and readers take one copy."""
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, _ = _playing(client)
    notes = [{"kind": "note", "seat": -1, "text": f"n{i}", "payload": {}} for i in range(LOG_BLOCK)]
    redis.rpush(log_key(tid), *[pack_log_line(orjson.dumps(n)) for n in notes])
    whole = gw.store.log(tid)
    lines = redis.lrange(log_key(tid), 0, LOG_BLOCK - 1)
    gw.store.blocks.append(tid, 0, pack_log_chunk([unpack_log_line(x) for x in lines]))  # ... dies
    assert redis.hget(table_key(tid), "logz") is None and gw.store.log(tid) == whole
    assert gw.store.seal(tid, 0)
    assert gw.store.blocks.path(tid).stat().st_size > 0 and gw.store.log(tid) == whole
    assert gw.store.log_tail(tid, len(whole)) == whole and len(gw.store.blocks.read(tid, 0, 1)) == 1


def test_sealed_blocks_missing_from_the_shared_folder_are_said_not_read_as_nothing(client, app):
    """A gateway and a tables worker that do not share the data folder: a table whose
    blocks one sealed has no file where the other looks. The log is refused in words
    naming the folder, never answered as an empty or shortened log."""
    gw = app.extensions["cultists"]
    redis = gw.redis
    tid, _ = _playing(client)
    notes = [{"kind": "note", "seat": -1, "text": f"n{i}", "payload": {}} for i in range(LOG_BLOCK)]
    redis.rpush(log_key(tid), *[pack_log_line(orjson.dumps(n)) for n in notes])
    assert gw.store.seal(tid, 0)
    gw.store.blocks.path(tid).unlink()  # ... sealed by a process with another folder
    with pytest.raises(RuntimeError, match="must share the data folder"):
        gw.store.log(tid)
    with pytest.raises(RuntimeError, match=str(gw.store.blocks.path(tid))):
        gw.store.log_tail(tid, 2 * LOG_BLOCK)
