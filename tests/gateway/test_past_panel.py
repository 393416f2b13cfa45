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


def _table(client, seats: list[dict], rounds: int = 1) -> str:
    body = {"game": GAME, "seats": seats, "config": {"rounds": rounds}, "decision_seconds": 60}
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
    seed, key = _deal(client, tid)
    state = rebuild(spec, spec.make_config({"rounds": 1}), 4, seed, [[0, first]], key)
    assert 'data-testid="hand"' in mine, "seat 0's hand is in its own past panel"
    hand = mine[mine.index('data-testid="hand"') : mine.index('data-testid="codex"')]
    ids = re.findall(r'data-card-id="(\d+)"', hand)
    assert [int(i) for i in ids] == [c["id"] for c in state.view(0)["hand"]]
    assert "Your agenda" in mine and "data-action" not in mine


def _deal(client, tid: str) -> tuple[int, bytes | None]:
    """A running table's seed and deal key (the API gives them only in the finished table's
    record; the key alone deals the cards, docs/fairness.md)."""
    with client.application.app_context():
        table = current().tables.get(tid)
        return table.seed, table.deal_key


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
    # A table is marked finished in its own slot, then listed in the finished index's shard
    # (another slot, the next command): the list may trail the status by that command.
    wait_for(
        lambda: f'data-table="{tid}"' in client.get("/replays").get_data(as_text=True),
        timeout=30,
        what="the finished table in the replays list",
    )
    assert f'data-table="{tid}"' not in client.get("/replays?game=trash_cult").get_data(as_text=True)
    assert f'data-table="{tid}"' in client.get(f"/replays?game={GAME}").get_data(as_text=True)
    assert client.get("/replay").status_code == 302


def _panel_version_and_words(html: str) -> tuple[int, int | None, str | None]:
    panel = int(re.search(r'data-testid="panel"[^>]*data-version="(\d+)"', html).group(1))
    found = re.search(r'data-testid="move-words" data-version="(\d+)"[^>]*>([^<]*)<', html)
    return panel, (int(found.group(1)) if found else None), (found.group(2).strip() if found else None)


def test_a_live_panel_words_belong_to_its_own_version(client, table_worker):
    """The bug: a live panel read its view at version V, then the table again, and told
    the move of V+1 when a bot moved in between. Fetched again and again while bots play,
    every panel's "last move" is the move of its own version, as the past panel of that
    version (built from the record, already right) tells it."""
    # The book's four rounds (TK-2), not one: on a loaded machine a panel takes long enough
    # to render that a one-round game can end before five different versions were fetched.
    tid = _table(client, [{"kind": "bot", "bot": "random"}] * 4, rounds=4)
    seen: dict[int, str] = {}
    while client.get(f"/api/tables/{tid}").get_json()["status"] != "finished":
        panel, version, words = _panel_version_and_words(
            client.get(f"/tables/{tid}/panel").get_data(as_text=True)
        )
        if panel > 0:
            assert version == panel, f"panel {panel} tells the move of version {version}"
            seen[panel] = words
    assert len(seen) >= 5, "bots moved while the panels were fetched"
    for version, words in seen.items():
        _, past_version, past_words = _panel_version_and_words(
            client.get(f"/tables/{tid}/panel?at={version}").get_data(as_text=True)
        )
        assert (past_version, past_words) == (version, words)


def test_the_last_move_of_a_record_read_before_a_move_is_its_own(client):
    """The same race, set up exactly: the record is read, then a move lands, then the
    panel's line is made from the record read first."""
    from services.gateway.pages import past_states
    from services.gateway.pages.history import last_move

    tid = _table(client, [{"kind": "human"}] * 4)
    tokens = [client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"] for s in range(4)]

    def move() -> None:
        table = client.get(f"/api/tables/{tid}").get_json()
        seat = table["to_act"][0]
        legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
        body = {"action": legal["legal_actions"][0]["id"], "version": legal["version"]}
        assert (
            client.post(f"/api/tables/{tid}/actions", json=body, headers=bearer(tokens[seat])).status_code
            == 200
        )

    move()
    with client.application.app_context():
        platform = current()
        before = platform.tables.get(tid)
        move()
        line = last_move(platform.store, past_states(), before)
        now = platform.tables.get(tid)
        latest = last_move(platform.store, past_states(), now)
    assert before.version == 1 and now.version == 2
    assert line is not None and line["version"] == 1 and latest is not None and latest["version"] == 2
    assert all(e["version"] == 1 for e in line["events"])
