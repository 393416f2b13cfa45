"""A live table's packed values (services/platform/packing.py): what readers get back is
what was written, and a table written before packing still plays and replays."""

from __future__ import annotations

import orjson

from services.engines.registry import available_games
from services.platform.keys import actions_key, log_key, table_key
from services.platform.packing import (
    pack_action,
    pack_log_line,
    pack_state,
    unpack_actions,
    unpack_log_line,
    unpack_state,
)

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
    moves = pack_action(0, 12) + pack_action(3, 2**31 - 1)
    assert unpack_actions(moves) == [[0, 12], [3, 2**31 - 1]] and unpack_actions(b"") == []


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
