"""A stream a client can trust (issue 33): its first event is the table as it is now, so a
client that connects mid-turn learns its turn at once, and every later update carries the
same fields, so a client redraws from the stream alone. Real Flask app, real Redis, real
engines; every table here is humans only, so nothing moves but what the test sends."""

from __future__ import annotations

import pytest

from services.engines.registry import available_games

from .conftest import bearer
from .support import sse_events

GAMES = available_games()


def _table(client, game: str, claim: int | None = None) -> tuple[str, list[str]]:
    """A humans-only table with its first `claim` seats taken (all of them by default)."""
    players = client.get(f"/api/games/{game}").get_json()["default_players"]
    tid = client.post("/api/tables", json={"game": game, "seed": 5}).get_json()["table"]
    taken = players if claim is None else claim
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(taken)]
    return tid, tokens


def _first(stream, name: str) -> dict:
    for event, data in sse_events(stream):
        if event == name:
            return data
    raise AssertionError(f"the stream ended without a {name!r} event")


@pytest.mark.parametrize("game", GAMES)
def test_a_seat_that_connects_mid_turn_learns_its_turn_first(client, game):
    """The bug: read /legal, then open the stream, and hear nothing until the seat timed
    out. Now the stream's first event says it, with the view a GET /view would give."""
    tid, tokens = _table(client, game)
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    assert legal["your_turn"]
    stream = client.get(f"/api/tables/{tid}/events/stream", headers=bearer(tokens[seat]), buffered=False)
    try:
        name, state = next(sse_events(stream))
    finally:
        stream.close()
    assert name == "state", "the state comes before the log"
    view = client.get(f"/api/tables/{tid}/view", headers=bearer(tokens[seat])).get_json()
    assert state["your_turn"] is True and state["seat"] == seat
    assert state["version"] == legal["version"] and state["to_act"] == legal["to_act"]
    assert state["legal_actions"] == legal["legal_actions"]
    assert state["view"] == view["view"]
    assert state["deadline"] == view["deadlines"][str(seat)]


def test_every_update_carries_the_state_after_the_move(client):
    game = GAMES[0]
    tid, tokens = _table(client, game)
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    other = (seat + 1) % len(tokens)
    mine = client.get(f"/api/tables/{tid}/events/stream", headers=bearer(tokens[other]), buffered=False)
    public = client.get(f"/api/tables/{tid}/events/stream", buffered=False)
    try:
        assert _first(mine, "state")["version"] == _first(public, "state")["version"] == 0
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        moved = client.post(
            f"/api/tables/{tid}/actions",
            json={"action": legal["legal_actions"][0]["id"], "version": legal["version"]},
            headers=bearer(tokens[seat]),
        ).get_json()
        update = _first(mine, "update")
        watched = _first(public, "update")
    finally:
        mine.close()
        public.close()
    assert update["version"] == watched["version"] == moved["version"]
    asked = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[other])).get_json()
    for field in ("your_turn", "to_act", "legal_actions", "status"):
        assert update[field] == asked[field], field
    seen = client.get(f"/api/tables/{tid}/view", headers=bearer(tokens[other])).get_json()["view"]
    assert update["view"] == seen
    assert watched["view"] == client.get(f"/api/tables/{tid}/view").get_json()["view"]
    assert not {"seat", "your_turn", "legal_actions", "deadline"} & set(watched), (
        "a watcher's update names no seat's choices"
    )


def test_a_stream_opened_while_waiting_hears_the_game_begin(client):
    """A seat that joined early and waits on its stream learns, from the stream alone,
    that the last seat was taken and whether its first decision is now."""
    game = GAMES[0]
    players = client.get(f"/api/games/{game}").get_json()["default_players"]
    tid, tokens = _table(client, game, claim=players - 1)
    early = client.get(f"/api/tables/{tid}/events/stream", headers=bearer(tokens[0]), buffered=False)
    try:
        assert _first(early, "state")["status"] == "waiting"
        client.post(f"/api/tables/{tid}/seats/{players - 1}")
        update = _first(early, "update")
    finally:
        early.close()
    table = client.get(f"/api/tables/{tid}").get_json()
    assert update["status"] == "playing" and update["to_act"] == table["to_act"]
    assert update["your_turn"] == (0 in table["to_act"])
    assert bool(update["legal_actions"]) == update["your_turn"]


def test_the_event_log_pages_and_refuses_unknown_parameters(client):
    game = GAMES[0]
    tid, _tokens = _table(client, game)
    everything = client.get(f"/api/tables/{tid}/events?limit=1000").get_json()
    assert not everything["more"] and len(everything["events"]) >= 2
    first = client.get(f"/api/tables/{tid}/events?limit=1").get_json()
    assert [e["id"] for e in first["events"]] == [0] and first["more"] and first["last"] == 0
    rest = client.get(f"/api/tables/{tid}/events?after={first['last']}&limit=1000").get_json()
    assert first["events"] + rest["events"] == everything["events"] and not rest["more"]
    for bad in ("aftr=3", "limit=0", "limit=1001", "after=-2"):
        reply = client.get(f"/api/tables/{tid}/events?{bad}")
        assert reply.status_code == 400, bad
        assert reply.get_json()["error"]["code"] == "malformed"
    assert client.get(f"/api/tables/{tid}/events/stream?atfer=1").status_code == 400


def test_a_stream_that_hears_the_last_move_late_still_sends_every_turn(client, app, monkeypatch):
    """The race behind a stream that missed a turn: an update reads the new log lines, then
    the state, and the game's last moves can land between the two reads. The state then
    says the game is over while those moves' lines were never read, and the stream used
    to end without them. Here the rest of the game is played at exactly that point."""
    game = "tricky_cultists"
    tid = client.post("/api/tables", json={"game": game, "players": 4, "seed": 5, "config": {"rounds": 1}})
    tid = tid.get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(4)]

    def move() -> bool:
        """One legal move by the seat to act; False once the game is over."""
        table = client.get(f"/api/tables/{tid}").get_json()
        if table["status"] == "finished":
            return False
        seat = table["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
        moved = client.post(f"/api/tables/{tid}/actions", json=body, headers=bearer(tokens[seat]))
        assert moved.status_code == 200, moved.get_json()
        return True

    reads = app.extensions["cultists"].stream_tables
    real = reads.stream_state
    calls: list[int] = []

    def state_after_the_rest_is_played(table_id, seat):
        calls.append(1)
        if len(calls) == 2:  # the first update's read, its log lines already read
            while move():
                pass
        return real(table_id, seat)

    monkeypatch.setattr(reads, "stream_state", state_after_the_rest_is_played)
    stream = client.get(f"/api/tables/{tid}/events/stream", buffered=False)
    try:
        events = sse_events(stream)
        assert next(events)[0] == "state"
        assert move()
        seen = list(events)
    finally:
        stream.close()
    assert len(calls) >= 2, "the update read the state after the rest of the game was played"
    logged = [e["id"] for e in client.get(f"/api/tables/{tid}/events?limit=500").get_json()["events"]]
    assert client.get(f"/api/tables/{tid}").get_json()["status"] == "finished"
    sent = [data["id"] for name, data in seen if name == "log"]
    assert sent == logged[-len(sent) :] and sent[-1] == logged[-1], "every turn up to the last was sent"
    update = next(data for name, data in seen if name == "update")
    assert update["status"] == "finished" and update["events"][-1]["id"] == logged[-1]
    assert seen[-1][0] == "end"
