"""Whole games of every title played through HTTP by humans and bots together, with the
no-leak check at every step, then the replay record rebuilt by `cultists replay`."""

from __future__ import annotations

import json
import random
import threading

import orjson
import pytest

from services.cli.main import main as cultists
from services.engines.registry import available_games

from .conftest import bearer
from .support import EngineProbe, assert_no_peeking, stored, two_player_config, wait_for

GAMES = available_games()
# A whole game to a short goal where the default one runs long: random bots take about
# 1,500 decisions to feed a Trash Cult of four its 4 food, and 130 to feed it 2 (the
# lobby's short game, tests/browser/support.py), each decision checked the same way.
SHORT = {"trash_cult": {"food_needed_4p": 2}}


@pytest.fixture(scope="module")
def probe(engines):
    p = EngineProbe(engines)
    yield p
    p.close()


def _open(client, game: str, bots: int) -> tuple[dict, dict[int, str]]:
    desc = client.get(f"/api/games/{game}").get_json()
    players = desc["default_players"]
    seats = [{"kind": "human"}] * (players - bots) + [{"kind": "bot", "bot": "random"}] * bots
    body = {"game": game, "seats": seats, "seed": 7, "config": SHORT.get(game, {})}
    table = client.post("/api/tables", json=body).get_json()
    assert table["status"] == "waiting" and table["players"] == players
    tokens = {}
    for seat in range(players - bots):
        claim = client.post(f"/api/tables/{table['table']}/seats/{seat}", json={"player": f"p{seat}"})
        assert claim.status_code == 201
        tokens[seat] = claim.get_json()["token"]
    assert claim.get_json()["status"] == "playing"
    return table, tokens


@pytest.mark.parametrize("game", GAMES)
def test_whole_game_humans_and_bots_over_http(game, client, app, probe, table_worker, tmp_path, capsysbinary):
    table, tokens = _open(client, game, bots=2)
    tid = table["table"]
    redis = app.extensions["cultists"].redis
    pick = random.Random(5)
    human_moves = 0
    while True:
        version, state = stored(redis, tid)
        public = client.get(f"/api/tables/{tid}/view").get_json()
        if public["version"] != version:
            continue  # a bot moved between the two reads; look again
        assert public["seat"] == -1 and not public["legal_actions"]
        assert public["view"] == probe.view(game, state, -1)
        views = {}
        for seat, token in tokens.items():
            mine = client.get(f"/api/tables/{tid}/view", headers=bearer(token)).get_json()
            if mine["version"] != version:
                break
            assert mine["seat"] == seat
            assert mine["view"] == probe.view(game, state, seat), (
                "the gateway gives exactly the engine's view"
            )
            views[seat] = mine
        else:
            others = {s: probe.view(game, state, s) for s in range(table["players"]) if s not in tokens}
            assert_no_peeking({s: v["view"] for s, v in views.items()} | others, public["view"])
            if public["terminal"]:
                break
            humans = [s for s in public["to_act"] if s in tokens]
            if not humans:
                wait_for(lambda v=version: stored(redis, tid)[0] != v, what="a bot move")
                continue
            seat = humans[0]
            legal = views[seat]["legal_actions"]
            assert legal, "a seat asked to decide has legal actions"
            move = client.post(
                f"/api/tables/{tid}/actions",
                json={"action": pick.choice(legal)["id"], "version": version},
                headers=bearer(tokens[seat]),
            )
            if move.status_code == 409:  # a bot's out-of-turn answer came first
                assert move.get_json()["error"]["version"] > version
                continue
            assert move.status_code == 200, move.get_json()
            assert move.get_json()["version"] == version + 1
            human_moves += 1

    final = client.get(f"/api/tables/{tid}").get_json()
    assert final["status"] == "finished" and human_moves > 0
    actions = {tuple(a) for a in client.get(f"/api/tables/{tid}/replay").get_json()["actions"]}
    assert {seat for seat, _ in actions} == set(range(table["players"])), "humans and bots both moved"

    record = client.get(f"/api/tables/{tid}/replay").get_json()
    # Two humans: a seed they chose is mixed, and the deal keyed (docs/fairness.md), so the
    # record holds the deal's key, published now that the game is over.
    assert set(record) == {"game", "players", "seed", "config", "actions", "deal_key"}
    assert len(record["actions"]) == final["decisions"] == stored(redis, tid)[0]
    path = tmp_path / "replay.json"
    path.write_text(json.dumps(record))
    capsysbinary.readouterr()
    assert cultists(["replay", str(path), "--json"]) == 0
    rebuilt = orjson.loads(capsysbinary.readouterr().out)
    assert rebuilt["terminal"] and rebuilt["winners"] == final["winners"]
    assert rebuilt["decisions"] == final["decisions"]


def test_event_log_and_stream_of_a_bot_table(client, table_worker):
    """A table of bots only plays itself out; its log and SSE stream tell the story."""
    game = GAMES[0]
    players = client.get(f"/api/games/{game}").get_json()["min_players"]
    seats = [{"kind": "bot", "bot": "random"}] * players
    body = {"game": game, "config": two_player_config(game), "seats": seats}
    table = client.post("/api/tables", json=body).get_json()
    assert table.get("status") == "playing", table
    tid = table["table"]

    stream = client.get(f"/api/tables/{tid}/events/stream", buffered=False)
    assert stream.status_code == 200 and stream.mimetype == "text/event-stream"
    seen: list[str] = []

    def read():
        for chunk in stream.response:
            seen.append(chunk.decode() if isinstance(chunk, bytes) else chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    wait_for(lambda: client.get(f"/api/tables/{tid}").get_json()["status"] == "finished", what="the bots")
    reader.join(timeout=20)
    assert not reader.is_alive(), "the stream ends when the game does"
    text = "".join(seen)
    assert "event: update" in text and text.rstrip().endswith("event: end\ndata: {}")

    log = client.get(f"/api/tables/{tid}/events").get_json()
    ids = [e["id"] for e in log["events"]]
    assert ids == list(range(len(ids))) and log["last"] == ids[-1]
    assert all(f"id: {i}\n" in text for i in ids), "every logged event was streamed once, with its id"
    resumed = client.get(f"/api/tables/{tid}/events/stream", headers={"Last-Event-ID": str(ids[-3])})
    body = resumed.get_data(as_text=True)
    assert f"id: {ids[-2]}\n" in body and f"id: {ids[-3]}\n" not in body
    tail = client.get(f"/api/tables/{tid}/events?after={ids[-2]}").get_json()
    assert [e["id"] for e in tail["events"]] == [ids[-1]]
