"""The replay API (no browser): what it gives for a finished table and a sweep's game, and
how it refuses what it cannot replay, in the gateway's one error shape."""

from __future__ import annotations

import json

import pytest

from services.engines.core.play import play_game
from services.engines.registry import load_game
from services.gateway.pages.replay import split_bots
from tests.gateway.support import wait_for


def _error(reply, status: int, code: str) -> None:
    assert reply.status_code == status, reply.get_json()
    assert reply.get_json()["error"]["code"] == code


def test_sweep_game_is_replayed_as_the_sweep_played_it(client):
    config = {"food_needed_4p": 2}
    bots = ["heuristic", "random", "heuristic", "random"]
    spec = load_game("trash_cult")
    expected = play_game(spec, spec.make_config(config), 4, 9, bots)
    query = {
        "game": "trash_cult",
        "seed": 9,
        "players": 4,
        "config": json.dumps(config),
        "bots": ",".join(bots),
    }

    summary = client.get("/api/replays", query_string=query).get_json()
    assert summary["steps"] == expected.decisions == len(summary["moves"])
    assert [[m["seat"], m["action"]] for m in summary["moves"]] == expected.actions
    assert summary["winners"] == expected.winners and summary["bots"] == bots
    assert summary["config"] == config

    end = client.get(
        f"/api/replays/steps/{expected.decisions}", query_string={**query, "seat": "all"}
    ).get_json()
    assert end["next"] is None and end["move"]["step"] == expected.decisions
    assert [v["seat"] for v in end["views"]] == [0, 1, 2, 3]
    assert all(v["terminal"] and v["winners"] == expected.winners for v in end["views"])
    start = client.get("/api/replays/steps/0", query_string=query).get_json()
    assert start["move"] is None and start["views"][0]["seat"] == -1
    assert start["next"] == summary["moves"][0]


def test_a_keyed_sweep_game_is_replayed_keyed_and_an_unknown_shuffle_refused(client):
    """A sweep dealt keyed links `shuffle=keyed` (docs/fairness.md, "Coupled deals"): the page
    plays that deal, not the Fisher-Yates one a link without it names."""
    spec = load_game("trash_cult")
    bots = ["heuristic"] * 2
    keyed = play_game(spec, None, 2, 21, bots, shuffle="keyed")
    plain = play_game(spec, None, 2, 21, bots)
    assert keyed.actions != plain.actions
    query = {"game": "trash_cult", "seed": 21, "players": 2, "bots": "heuristic"}
    summary = client.get("/api/replays", query_string={**query, "shuffle": "keyed"}).get_json()
    assert [[m["seat"], m["action"]] for m in summary["moves"]] == keyed.actions
    older = client.get("/api/replays", query_string=query).get_json()
    assert [[m["seat"], m["action"]] for m in older["moves"]] == plain.actions
    _error(client.get("/api/replays", query_string={**query, "shuffle": "riffle"}), 400, "malformed")


def test_finished_table_replays_its_record(client, table_worker):
    seats = [{"kind": "bot", "bot": "random"}] * 4
    table = client.post(
        "/api/tables", json={"game": "tricky_cultists", "seats": seats, "config": {"rounds": 1}, "seed": 4}
    ).get_json()
    tid = table["table"]
    _error(client.get("/api/replays", query_string={"table": tid}), 409, "not_finished")
    wait_for(lambda: client.get(f"/api/tables/{tid}").get_json()["status"] == "finished", what="the bots")
    final = client.get(f"/api/tables/{tid}").get_json()
    record = client.get(f"/api/tables/{tid}/replay").get_json()
    summary = client.get("/api/replays", query_string={"table": tid}).get_json()
    assert [[m["seat"], m["action"]] for m in summary["moves"]] == record["actions"]
    assert summary["winners"] == final["winners"] and summary["source"] == {"table": tid}
    assert summary["seat_names"][0] == "Random bot 0", "named as the live table named it"
    step = client.get("/api/replays/steps/5", query_string={"table": tid, "seat": "1"}).get_json()
    assert step["views"][0]["seat"] == 1 and step["views"][0]["view"]["viewer"] == 1


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ({}, 400, "malformed"),
        ({"table": "0123456789abcdef", "game": "trash_cult", "seed": 1}, 400, "malformed"),
        ({"table": "0123456789abcdef"}, 404, "unknown_table"),
        ({"game": "no_such_game", "seed": 1}, 404, "unknown_game"),
        ({"game": "trash_cult"}, 400, "malformed"),
        ({"game": "trash_cult", "seed": "x"}, 400, "malformed"),
        ({"game": "trash_cult", "seed": 1, "players": 5}, 400, "invalid_players"),
        ({"game": "trash_cult", "seed": 1, "players": 9}, 400, "malformed"),  # no game seats 9
        ({"game": "trash_cult", "seed": 1, "config": "{not json"}, 400, "invalid_config"),
        ({"game": "trash_cult", "seed": 1, "config": '{"no_such_field": 1}'}, 400, "invalid_config"),
        ({"game": "trash_cult", "seed": 1, "bots": "nobody"}, 400, "invalid_bots"),
        ({"game": "trash_cult", "seed": 1, "bots": "ismcts:iterations=100000000"}, 400, "bot_limit"),
        ({"game": "crazy_cultists", "seed": 1, "players": 2}, 400, "invalid_config"),  # CC-2
        (
            {"game": "trash_cult", "seed": 1, "players": 2, "bots": "random,random,random"},
            400,
            "invalid_bots",
        ),
    ],
)
def test_what_cannot_be_replayed_is_refused(client, query, status, code):
    _error(client.get("/api/replays", query_string=query), status, code)
    # ... with a code the document lists for that status (what an SDK switches on)
    responses = client.get("/api/openapi.json").get_json()["paths"]["/api/v1/replays"]["get"]["responses"]
    assert code in responses[str(status)]["x-error-codes"]


def test_steps_and_seats_out_of_range(client):
    query = {"game": "crazy_cultists", "seed": 2, "config": '{"variant": "beast"}'}
    steps = client.get("/api/replays", query_string=query).get_json()["steps"]
    _error(client.get(f"/api/replays/steps/{steps + 1}", query_string=query), 404, "unknown_step")
    _error(client.get("/api/replays/steps/0", query_string={**query, "seat": "4"}), 404, "unknown_seat")
    _error(client.get("/api/replays/steps/0", query_string={**query, "seat": "me"}), 400, "malformed")
    assert client.get("/replay", query_string={**query, "step": steps + 1}).status_code == 404
    assert b"unknown step" in client.get("/replay", query_string={**query, "step": steps + 1}).data


def test_bot_line_ups_split_as_sweep_reports_write_them():
    assert split_bots("heuristic") == ["heuristic"]
    assert split_bots("heuristic,random") == ["heuristic", "random"]
    assert split_bots("ismcts:iterations=20,rollout=heuristic,random") == [
        "ismcts:iterations=20,rollout=heuristic",
        "random",
    ]
    assert split_bots("ismcts:iterations=20;random") == ["ismcts:iterations=20", "random"]
