"""An API a newcomer reads without surprises (issue 15, item 5): /legal says whose turn it
is and the table's status, a table's config is the whole config, a finished table carries
its final scores and where its replay is."""

from __future__ import annotations

from .conftest import bearer
from .support import wait_for

CRAZY = "crazy_cultists"


def test_legal_says_whether_it_is_your_turn(client):
    tid = client.post(
        "/api/tables", json={"game": CRAZY, "players": 2, "config": {"two_players": True}}
    ).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    acting = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    mine = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[acting])).get_json()
    theirs = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[1 - acting])).get_json()
    assert mine["your_turn"] and mine["legal_actions"] and mine["status"] == "playing"
    assert not theirs["your_turn"] and theirs["legal_actions"] == [] and theirs["to_act"] == [acting]


def test_a_tables_config_is_the_whole_config(client):
    defaults = client.get(f"/api/games/{CRAZY}").get_json()["default_config"]
    table = client.post("/api/tables", json={"game": CRAZY, "config": {"favor_1": 20}}).get_json()
    assert table["config"] == {**defaults, "favor_1": 20}
    assert client.get(f"/api/tables/{table['table']}").get_json()["config"] == table["config"]


def test_a_finished_table_carries_its_scores_and_replay(client, table_worker):
    seats = [{"kind": "bot", "bot": "random"}] * 4
    tid = client.post(
        "/api/tables", json={"game": "tricky_cultists", "seats": seats, "config": {"rounds": 1}}
    ).get_json()["table"]
    assert "returns" not in client.get(f"/api/tables/{tid}").get_json(), "not before the end"
    final = wait_for(
        lambda: (t := client.get(f"/api/tables/{tid}").get_json())["status"] == "finished" and t,
        timeout=60,
        what="the bots to finish",
    )
    assert len(final["returns"]) == 4
    assert client.get(final["replay"]).status_code == 200
    assert (
        final["replay_page"] == f"/replay?table={tid}" and client.get(final["replay_page"]).status_code == 200
    )
    # Why it ended so: each seat's points by the book's scoring steps, which add up to its
    # total, and the team totals that decide (TK-11).
    scores = final["scores"]
    assert [s["seat"] for s in scores] == [0, 1, 2, 3]
    for s in scores:
        parts = s["parts"]
        assert s["total"] == parts["agenda"] + parts["tricks"] + parts["bonus"] + parts["suspicion"]
        assert parts["team_total"] == sum(t["total"] for t in scores if t["seat"] % 2 == s["seat"] % 2)
    if final["winners"]:
        best = max(s["parts"]["team_total"] for s in scores)
        assert all(scores[w]["parts"]["team_total"] == best for w in final["winners"])


def test_the_last_move_answers_with_the_final_scores(client):
    """Two humans play Crazy Cultists to one candle; the move that ends it says who won and
    why (candles against candles needed), and the table says the same afterwards."""
    config = {"two_players": True, "candles_to_win": 1}
    tid = client.post("/api/tables", json={"game": CRAZY, "players": 2, "config": config}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    for _ in range(2000):
        table = client.get(f"/api/tables/{tid}").get_json()
        seat = table["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        move = {"action": legal["legal_actions"][-1]["id"], "version": legal["version"]}
        result = client.post(f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[seat])).get_json()
        assert "scores" in result or result["status"] == "playing", result
        if result["status"] == "finished":
            break
    else:
        raise AssertionError("the game did not end")
    [winner] = result["winners"]
    scores = result["scores"]
    assert scores[winner]["total"] == scores[winner]["parts"]["candles"] == 1
    assert scores[1 - winner]["total"] == 0 and scores[1 - winner]["parts"]["candles_to_win"] == 1
    assert client.get(f"/api/tables/{tid}").get_json()["scores"] == scores
