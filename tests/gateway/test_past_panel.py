"""`/tables/<id>/panel?at=V`: a live table's earlier position (issue 17), as the asking
seat saw it then; bad versions refused; the Replays list of finished games."""

from __future__ import annotations

import re

from services.engines.core.play import replay as rebuild
from services.engines.registry import load_game
from services.engines.tricky_cultists.cards import AGENDAS
from services.gateway.context import current

from .conftest import bearer
from .support import wait_for

GAME = "tricky_cultists"  # its draft is private: a kept agenda must not show to others


def _table(client, seats: list[dict]) -> str:
    body = {"game": GAME, "seats": seats, "config": {"rounds": 1}, "decision_seconds": 60}
    return client.post("/api/tables", json=body).get_json()["table"]


def test_past_positions_as_each_seat_saw_them(client, table_worker):
    seats = [{"kind": "human"}] + [{"kind": "bot", "bot": "heuristic"}] * 3
    tid = _table(client, seats)
    token = client.post(f"/api/tables/{tid}/seats/0", json={"player": "ann"}).get_json()["token"]
    view = client.get(f"/api/tables/{tid}/view", headers=bearer(token)).get_json()
    first = view["legal_actions"][0]["id"]
    client.post(f"/api/tables/{tid}/actions", json={"action": first, "version": 0}, headers=bearer(token))
    wait_for(
        lambda: client.get(f"/api/tables/{tid}").get_json()["version"] >= 4, timeout=30, what="bots drafted"
    )

    # Version 2 (bot seat 1 kept an agenda): the spectator sees no hand and no agenda name.
    spectator = client.get(f"/tables/{tid}/panel?at=2").get_data(as_text=True)
    assert 'data-version="2"' in spectator and 'data-past="1"' in spectator
    assert 'data-testid="hand"' not in spectator and "data-action" not in spectator
    words = re.search(r'data-testid="move-words"[^>]*>([^<]*)<', spectator).group(1)
    assert "agenda" in words and not any(a in words for a in AGENDAS), "which agenda stays secret"
    # Seat 0 at version 1 sees its own hand as it was then (= the rules library's view).
    mine = client.get(f"/tables/{tid}/panel?at=1", headers=bearer(token)).get_data(as_text=True)
    spec = load_game(GAME)
    state = rebuild(spec, spec.make_config({"rounds": 1}), 4, _seed(client, tid), [[0, first]])
    assert 'data-testid="hand"' in mine, "seat 0's hand is in its own past panel"
    hand = mine[mine.index('data-testid="hand"') : mine.index('data-testid="codex"')]
    ids = re.findall(r'data-card-id="(\d+)"', hand)
    assert [int(i) for i in ids] == [c["id"] for c in state.view(0)["hand"]]
    assert "Your agenda" in mine and "data-action" not in mine


def _seed(client, tid: str) -> int:
    """A running table's seed (the API gives it only in the finished table's record)."""
    with client.application.app_context():
        return current().tables.get(tid).seed


def test_bad_versions_are_refused(client, table_worker):
    seats = [{"kind": "human"}] * 4
    tid = _table(client, seats)
    bad = client.get(f"/tables/{tid}/panel?at=x")
    assert bad.status_code == 400 and bad.get_json()["error"]["code"] == "malformed"
    ahead = client.get(f"/tables/{tid}/panel?at=5")
    assert ahead.status_code == 404 and ahead.get_json()["error"]["code"] == "unknown_version"
    assert client.get("/tables/0123456789abcdef/panel?at=0").status_code == 404


def test_finished_games_are_listed_for_replays(client, table_worker):
    seats = [{"kind": "bot", "bot": "heuristic"}] * 4
    tid = _table(client, seats)
    wait_for(
        lambda: client.get(f"/api/tables/{tid}").get_json()["status"] == "finished",
        timeout=60,
        what="the end",
    )
    listed = client.get("/replays").get_data(as_text=True)
    assert f'data-table="{tid}"' in listed
    assert f'data-table="{tid}"' not in client.get("/replays?game=trash_cult").get_data(as_text=True)
    assert f'data-table="{tid}"' in client.get(f"/replays?game={GAME}").get_data(as_text=True)
    assert client.get("/replay").status_code == 302
