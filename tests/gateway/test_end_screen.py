"""Issue 31, item 4: the end screen of a finished table explains the game: why it ended (the
final move's public lines), each seat's final score and its parts, the ranking, the rating
change on a rated table, and links to the decisive move's replay step and a rematch.

A rated table comes from matchmaking (two signed-in guests), played to its end through the
API on real Redis and real engines; the panel's end screen is read back as HTML."""

from __future__ import annotations

import html
import re
import time

from .conftest import bearer
from .support import sign_in_guest, wait_for

GAME = "trash_cult"  # 2 players by its rules


def _rows(page: str) -> list[dict[str, str]]:
    found = re.findall(
        r'data-testid="final-row" data-seat="(\d+)" data-place="(\w+)" data-total="([\d.]+)"', page
    )
    return [{"seat": int(s), "place": p, "total": t} for s, p, t in found]


def test_a_rated_tables_end_screen_explains_the_result(client, app):
    gw = app.extensions["cultists"]
    players = [sign_in_guest(client, name) for name in ("ann", "bob")]
    headers = {}
    for who in players:
        reply = client.post(
            "/api/matchmaking/tickets", json={"game": GAME, "players": 2, "player": who["name"]},
            headers=who["headers"],
        ).get_json()  # fmt: skip
        headers[who["player"]] = {**bearer(reply["token"]), **who["headers"]}
        ticket_url = f"/api/matchmaking/tickets/{reply['ticket']}"

    def matched():
        gw.matchmaking.match(GAME, 2)
        status = client.get(ticket_url, headers=headers[players[1]["player"]]).get_json()
        return status if status["status"] == "matched" else None

    tid = wait_for(matched, timeout=15, what="the match")["table"]
    deadline = time.monotonic() + 180
    while True:
        table = client.get(f"/api/tables/{tid}").get_json()
        if table["status"] == "finished":
            break
        assert time.monotonic() < deadline, "the game ends"
        for h in headers.values():
            view = client.get(f"/api/tables/{tid}/view", headers=h).get_json()
            if view["legal_actions"]:
                move = {"action": view["legal_actions"][0]["id"], "version": view["version"]}
                client.post(f"/api/tables/{tid}/actions", json=move, headers=h)
    assert table["rated"]
    wait_for(lambda: tid not in gw.store.to_rate(), timeout=15, what="the rating update")

    seat_of = {s["player_id"]: s["seat"] for s in table["seats"]}
    ann = players[0]
    page = client.get(f"/tables/{tid}/panel", headers=headers[ann["player"]]).get_data(as_text=True)
    why = re.search(r'data-testid="end-why"><strong>Why it ended:</strong> ([^<]*)<', page)
    assert why and why.group(1).strip(), "the reason is given"
    finals = [e["text"] for e in client.get(f"/api/tables/{tid}/events?limit=1000").get_json()["events"]
              if e["version"] == table["version"] and e["kind"] != "draw"]  # fmt: skip
    assert len(html.unescape(why.group(1)).split("; ")) == len(finals), "the final move's lines"

    rows = _rows(page)
    totals = {s["seat"]: s["total"] for s in table["scores"]}
    assert sorted(r["seat"] for r in rows) == [0, 1]
    assert all(float(r["total"]) == totals[r["seat"]] for r in rows), "each seat's final score"
    ranked = sorted(range(2), key=lambda s: (table["returns"][s], totals[s]), reverse=True)
    assert [r["seat"] for r in rows] == ranked, "best first"
    for winner in table["winners"]:
        assert next(r for r in rows if r["seat"] == winner)["place"] == "1st"
    assert "you" in page and f"step={table['version']}" in page, "the decisive move's replay step"
    assert 'data-testid="rematch"' in page

    cells = re.findall(r'data-testid="rating-change">([^<]*)<', page)
    assert len(cells) == 2
    for r, cell in zip(rows, cells, strict=True):
        player = next(p for p, s in seat_of.items() if s == r["seat"])
        now = client.get(f"/api/matchmaking/ratings/{GAME}/{player}").get_json()["mu"]
        assert cell.startswith("25.0 → ") and f"→ {now:.1f} " in cell, (cell, now)

    spectator = client.get(f"/tables/{tid}/panel").get_data(as_text=True)
    assert 'data-testid="final-scores"' in spectator and 'data-testid="rematch"' not in spectator
