"""Issue 31, item 5: a table's chat. Seated players post (bounded length and rate), anyone
at the table reads; bad input is refused with the API's error shape and changes nothing;
the routes are in the OpenAPI document with who may call them."""

from __future__ import annotations

from services.platform.chat import MAX_CHARS, RATE

from .conftest import bearer

GAME = "trash_cult"


def _table(client) -> tuple[str, list[str]]:
    tid = client.post("/api/tables", json={"game": GAME, "players": 2}).get_json()["table"]
    return tid, [client.post(f"/api/tables/{tid}/seats/{s}", json={"player": n}).get_json()["token"]
                 for s, n in ((0, "ann"), (1, "bob"))]  # fmt: skip


def _error(reply, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.get_json()
    error = reply.get_json()["error"]
    assert error["code"] == code, error
    return error


def test_seated_players_talk_and_everyone_reads(client):
    tid, tokens = _table(client)
    url = f"/api/tables/{tid}/chat"
    said = client.post(url, json={"text": "  good <b>luck</b>\x07 "}, headers=bearer(tokens[0]))
    assert said.status_code == 200, said.get_json()
    assert said.get_json()["text"] == "good <b>luck</b>", "kept as plain text, control characters dropped"
    client.post(url, json={"text": "thanks"}, headers=bearer(tokens[1]))
    messages = client.get(url).get_json()["messages"]  # a spectator reads, no token
    assert [(m["seat"], m["name"], m["text"]) for m in messages] == [
        (0, "ann", "good <b>luck</b>"),
        (1, "bob", "thanks"),
    ]
    assert [
        m["text"] for m in client.get(url, query_string={"after": messages[0]["id"]}).get_json()["messages"]
    ] == ["thanks"]

    # Who may post: a seat's token; a spectator or a stranger's token cannot.
    _error(client.post(url, json={"text": "hi"}), 401, "token_required")
    _error(client.post(url, json={"text": "hi"}, headers=bearer("not-a-token")), 403, "wrong_token")
    # Bounded: too long, empty, not text; none of it kept.
    assert (
        _error(
            client.post(url, json={"text": "x" * (MAX_CHARS + 1)}, headers=bearer(tokens[0])),
            400,
            "malformed",
        )["field"]
        == "text"
    )
    _error(client.post(url, json={"text": " \n "}, headers=bearer(tokens[0])), 400, "malformed")
    _error(client.post(url, json={"text": 5}, headers=bearer(tokens[0])), 400, "malformed")
    _error(client.get(url, query_string={"after": "-1"}), 400, "malformed")
    assert len(client.get(url).get_json()["messages"]) == 2
    _error(client.get("/api/tables/0000000000000000/chat"), 404, "unknown_table")


def test_a_seat_is_rate_limited(client):
    tid, tokens = _table(client)
    url = f"/api/tables/{tid}/chat"
    for n in range(RATE):
        assert client.post(url, json={"text": f"m{n}"}, headers=bearer(tokens[0])).status_code == 200
    refused = client.post(url, json={"text": "one more"}, headers=bearer(tokens[0]))
    _error(refused, 429, "chat_limited")
    assert int(refused.headers["Retry-After"]) >= 1
    assert client.post(url, json={"text": "my turn"}, headers=bearer(tokens[1])).status_code == 200, (
        "per seat"
    )
    assert len(client.get(url).get_json()["messages"]) == RATE + 1


def test_the_chat_routes_are_documented_with_who_may_call(client):
    doc = client.get("/api/openapi.json").get_json()
    ops = doc["paths"]["/api/v1/tables/{table_id}/chat"]
    assert "a seated player" in ops["post"]["description"] and ops["post"]["security"]
    assert "anyone" in ops["get"]["description"]
    assert "chat_limited" in ops["post"]["responses"]["429"]["x-error-codes"]
