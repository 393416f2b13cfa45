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
