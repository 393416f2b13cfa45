"""One request per move (issue 18): a move's answer, and a seat's own event stream, say what
`/legal` would say for that seat next, so a client never has to ask again after moving.
Checked against `/legal` itself at every step of real games on the real engines."""

from __future__ import annotations

import random

import pytest

from services.engines.registry import available_games

from .conftest import bearer
from .support import sse_events

GAMES = available_games()
MOVES = 60  # enough for turns to pass around the table many times, in a few seconds


def _humans_table(client, game: str) -> tuple[str, list[str]]:
    """A table of humans only, every seat taken (so no bot or worker moves in between)."""
    players = client.get(f"/api/games/{game}").get_json()["default_players"]
    tid = client.post("/api/tables", json={"game": game, "seed": 3}).get_json()["table"]
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(players)]
    return tid, tokens


LEGAL_FIELDS = ("version", "seat", "status", "your_turn", "to_act", "legal_actions")


@pytest.mark.parametrize("game", GAMES)
def test_a_moves_answer_says_what_legal_says_next(client, game):
    tid, tokens = _humans_table(client, game)
    pick = random.Random(11)
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    answered = {True: 0, False: 0}
    for _ in range(MOVES):
        move = client.post(
            f"/api/tables/{tid}/actions",
            json={"action": pick.choice(legal["legal_actions"])["id"], "version": legal["version"]},
            headers=bearer(tokens[seat]),
        )
        assert move.status_code == 200, move.get_json()
        moved = move.get_json()
        asked = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        assert {k: moved[k] for k in LEGAL_FIELDS} == {k: asked[k] for k in LEGAL_FIELDS}
        assert moved["your_turn"] == (moved["status"] == "playing" and seat in moved["to_act"])
        assert bool(moved["legal_actions"]) == moved["your_turn"]
        answered[moved["your_turn"]] += 1
        if moved["status"] == "finished":
            break
        if moved["your_turn"]:
            legal = moved  # the one-request path: no second look
        else:
            seat = moved["to_act"][0]
            legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    assert answered[False], "turns passed to the other seat"


def _updates(stream) -> dict:
    """The next `update` event's data from a test client's streamed response (read as
    events: a body chunk may carry several, an update and the log lines after it)."""
    for event, data in sse_events(stream):
        if event == "update":
            return data
    raise AssertionError("the stream ended without an update")


def test_a_seats_stream_carries_its_turn_and_choices_a_watchers_does_not(client):
    game = GAMES[0]
    tid, tokens = _humans_table(client, game)
    seat = client.get(f"/api/tables/{tid}").get_json()["to_act"][0]
    other = (seat + 1) % len(tokens)
    mine = client.get(f"/api/tables/{tid}/events/stream", headers=bearer(tokens[other]), buffered=False)
    public = client.get(f"/api/tables/{tid}/events/stream", buffered=False)
    assert mine.status_code == public.status_code == 200
    legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
    moved = client.post(
        f"/api/tables/{tid}/actions",
        json={"action": legal["legal_actions"][0]["id"], "version": legal["version"]},
        headers=bearer(tokens[seat]),
    ).get_json()
    try:
        update = _updates(mine)
        watched = _updates(public)
    finally:
        mine.close()
        public.close()
    asked = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[other])).get_json()
    assert update["version"] == moved["version"]
    assert {k: update[k] for k in LEGAL_FIELDS} == {k: asked[k] for k in LEGAL_FIELDS}
    assert not {"seat", "your_turn", "legal_actions", "deadline"} & set(watched), (
        "a watcher's update names no seat's choices"
    )


def test_a_stream_with_a_token_that_holds_no_seat_is_refused(client):
    tid, _tokens = _humans_table(client, GAMES[0])
    refused = client.get(f"/api/tables/{tid}/events/stream", headers=bearer("not-a-seat-token"))
    assert refused.status_code == 403 and refused.get_json()["error"]["code"] == "wrong_token"
