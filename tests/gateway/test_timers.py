"""Deadlines: an absent seat is played for by its bot once its time is up, enforced by
the real beat schedule and a real table worker; the player comes back with the token."""

from __future__ import annotations

import time

from services.engines.registry import available_games
from services.platform.dispatch import TaskQueue
from services.runtime.task_client import task_client

from .conftest import AWAY_SECONDS, BOT_GRACE_SECONDS, bearer
from .support import two_player_config, wait_for

GAME = available_games()[0]
TWO = two_player_config(GAME)  # its tables here seat 2 (its min_players)


def _timeouts(client, tid: str, seat: int) -> list[dict]:
    events = client.get(f"/api/tables/{tid}/events").get_json()["events"]
    return [e for e in events if e["kind"] == "timeout" and e["seat"] == seat]


def test_absent_seat_is_played_for_and_comes_back(client, table_worker, beat):
    players = client.get(f"/api/games/{GAME}").get_json()["min_players"]
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": "random"}] * (players - 1)
    tid = client.post(
        "/api/tables", json={"game": GAME, "config": TWO, "seats": seats, "decision_seconds": 1}
    ).get_json()["table"]
    token = client.post(f"/api/tables/{tid}/seats/0", json={"player": "absent"}).get_json()["token"]
    started = time.monotonic()

    first = wait_for(lambda: _timeouts(client, tid, 0), timeout=30, interval=0.1, what="a timeout at seat 0")
    assert time.monotonic() - started >= 1.0 or first[0]["version"] > 0, "not before its deadline"
    summary = client.get(f"/api/tables/{tid}").get_json()
    if summary["status"] == "playing":
        assert summary["seats"][0]["away"], "a seat that timed out is marked away"
        assert summary["seats"][0]["kind"] == "human", "the player keeps the seat"
        # away: the next decisions come round quickly, not after a whole deadline each
        wait_for(lambda: len(_timeouts(client, tid, 0)) >= 2 or _over(client, tid), timeout=20, interval=0.1)
    # the player comes back with the token: the view is theirs again and they are not away
    back = client.get(f"/api/tables/{tid}/view", headers=bearer(token))
    assert back.status_code == 200 and back.get_json()["seat"] == 0
    summary = client.get(f"/api/tables/{tid}").get_json()
    assert not summary["seats"][0]["away"]
    if summary["status"] == "playing" and 0 in summary["to_act"]:
        deadline = summary["seats"][0]["deadline"]
        assert deadline - time.time() > AWAY_SECONDS, "back from away: a full decision time again"


def _over(client, tid: str) -> bool:
    return client.get(f"/api/tables/{tid}").get_json()["status"] == "finished"


def test_every_absent_human_is_played_for(client, table_worker, beat):
    """Two humans who never act: each decision of either, in turn or out of turn, is
    made by their bots after the deadline, so the table keeps moving."""
    tid = client.post(
        "/api/tables", json={"game": GAME, "players": 2, "config": TWO, "decision_seconds": 1}
    ).get_json()["table"]
    for seat in (0, 1):
        client.post(f"/api/tables/{tid}/seats/{seat}")
    wait_for(
        lambda: (
            {
                e["seat"]
                for e in client.get(f"/api/tables/{tid}/events").get_json()["events"]
                if e["kind"] == "timeout"
            }
            == {0, 1}
            or _over(client, tid)
        ),
        timeout=40,
        interval=0.2,
        what="both seats timed out",
    )
    assert client.get(f"/api/tables/{tid}").get_json()["version"] >= 2


def test_leaving_during_play_hands_the_seat_to_its_bot(client, app, table_worker):
    store = app.extensions["cultists"].store
    tid = client.post("/api/tables", json={"game": GAME, "players": 2, "config": TWO, "seed": 5}).get_json()[
        "table"
    ]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in (0, 1)]
    left = client.delete(f"/api/tables/{tid}/seats/1", headers=bearer(tokens[1]))
    assert left.status_code == 200 and left.get_json()["seats"][1]["kind"] == "bot"
    assert client.get(f"/api/tables/{tid}/view", headers=bearer(tokens[1])).status_code == 403

    def my_turn_or_over():
        view = client.get(f"/api/tables/{tid}/view", headers=bearer(tokens[0])).get_json()
        return view if view["legal_actions"] or view["terminal"] else None

    while not any(seat == 1 for seat, _ in store.actions(tid)):  # seat 1's bot answers at once
        view = wait_for(my_turn_or_over, timeout=20, what="seat 0's turn")
        assert not view["terminal"], "the game ended before seat 1's bot moved"
        move = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
        assert client.post(
            f"/api/tables/{tid}/actions", json=move, headers=bearer(tokens[0])
        ).status_code in (200, 409)
    assert any(e["kind"] == "left" for e in client.get(f"/api/tables/{tid}/events").get_json()["events"])


def test_a_lost_bot_task_is_made_up_by_the_deadline_sweep(client, app, table_worker, beat, gateway_settings):
    """Queue the table's bot task where no worker listens (as if the gateway died right
    after the commit): the bot seat's short deadline still gets the bot to move."""
    gw = app.extensions["cultists"]
    nowhere = TaskQueue(task_client(gateway_settings.redis_url), queue="gateway-test-nobody-listens")
    gw.tasks = gw.tables.tasks = nowhere
    try:
        players = client.get(f"/api/games/{GAME}").get_json()["min_players"]
        seats = [{"kind": "bot", "bot": "random"}] * players
        table = client.post("/api/tables", json={"game": GAME, "config": TWO, "seats": seats}).get_json()
        deadline = table["seats"][table["to_act"][0]]["deadline"]
        assert deadline is not None and deadline - time.time() <= BOT_GRACE_SECONDS
        wait_for(lambda: client.get(f"/api/tables/{table['table']}").get_json()["version"] > 0, timeout=15)
    finally:
        nowhere.close()
        gw.redis.delete("gateway-test-nobody-listens")


def test_a_move_read_before_a_seat_changed_commits_with_that_seats_deadlines(client, app):
    """The gateway works out a move's deadlines from the seats it read (store.py,
    seat_deadlines.py); a seat that leaves between that read and the commit (its kind now
    a bot's) must not be scheduled as the human it was: the commit sees `seats_v` moved,
    computes again from the seats as they are, and the move still goes through, once."""
    gw = app.extensions["cultists"]
    tid = client.post(
        "/api/tables", json={"game": GAME, "players": 2, "config": TWO, "decision_seconds": 600}
    ).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(2)]
    read = gw.store.load(tid)  # what the move's request read
    seat = read.to_act[0]
    other = 1 - seat
    assert client.delete(f"/api/tables/{tid}/seats/{other}", headers=bearer(tokens[other])).status_code == 200
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    answer = gw.tables.act(read, seat, legal["legal_actions"][0]["id"], read.version)
    assert answer["version"] == read.version + 1
    now = gw.store.load(tid)
    assert now.version == read.version + 1 and now.seats[other].kind == "bot"
    if other in now.to_act:  # a bot's safety-net deadline, not the 600 s of the human it was
        assert now.seats[other].deadline - time.time() <= BOT_GRACE_SECONDS + 1
    deadlines = [now.seats[s].deadline for s in now.to_act if now.seats[s].deadline is not None]
    assert now.due == (f"{min(deadlines):.3f}" if deadlines else "")
