"""Issue 31: How to play and the card pictures without a browser: what each route serves
for every game, and the clear errors for what it does not (changing nothing)."""

from __future__ import annotations

import pytest

from services.engines.crazy_cultists.cards import NAMES as CRAZY_NAMES
from services.engines.registry import GAME_MODULES, load_game
from services.engines.trash_cult.cards import KIND_NAMES as TRASH_NAMES
from services.engines.tricky_cultists.cards import AGENDAS, SUIT_NAMES

# Every card key each engine's views carry (Tricky Cultists' cult cards are objects, drawn
# from their fields; its named faces are the suits, the agendas and the tokens).
KEYS = {"crazy_cultists": CRAZY_NAMES, "trash_cult": TRASH_NAMES, "tricky_cultists": (*SUIT_NAMES, *AGENDAS)}


@pytest.mark.parametrize("game", sorted(GAME_MODULES))
def test_every_card_of_every_game_has_a_face_and_words(client, game):
    guide = load_game(game).presentation.guide
    for key in KEYS[game]:
        face = guide.face(key)
        assert face is not None and len(face.text) > 15, key
        reply = client.get(f"/cards/{game}/{key}.svg")
        assert reply.status_code == 200 and reply.mimetype == "image/svg+xml"
        body = reply.get_data(as_text=True)
        assert body.startswith("<svg") and "<text" in body and " style=" not in body  # CSP: no inline style
        assert reply.headers["Cache-Control"].startswith("public")
    back = client.get(f"/cards/{game}/back.svg")
    assert back.status_code == 200 and guide.back_mark in back.get_data(as_text=True)
    page = client.get(f"/games/{game}/how-to-play")
    assert page.status_code == 200
    text = page.get_data(as_text=True)
    for face in guide.faces:
        assert f'data-card="{face.key}"' in text


def test_tricky_cards_are_drawn_from_their_fields(client):
    ok = client.get("/cards/tricky_cultists/card.svg?suit=Blue&rank=4&value=5&name=Blue%204")
    assert ok.status_code == 200
    body = ok.get_data(as_text=True)
    assert "Blue 4" in body and ">5<" in body and "Blue led" in body


@pytest.mark.parametrize(
    ("url", "status", "code", "field"),
    [
        ("/cards/chess/back.svg", 404, "unknown_game", "game"),
        ("/cards/crazy_cultists/queen_of_hearts.svg", 404, "unknown_card", "key"),
        ("/cards/tricky_cultists/card.svg?suit=Gold&rank=4&value=5&name=x", 404, "unknown_card", "suit"),
        ("/cards/tricky_cultists/card.svg?suit=Blue&rank=four&value=5&name=x", 400, "malformed", "rank"),
        (
            "/cards/tricky_cultists/card.svg?suit=Blue&rank=4&value=5&name=" + "x" * 40,
            400,
            "malformed",
            "name",
        ),
        ("/cards/crazy_cultists/card.svg?suit=Blue&rank=4&value=5&name=x", 400, "malformed", "game"),
    ],
)
def test_bad_card_requests_get_clear_errors(client, url, status, code, field):
    reply = client.get(url)
    assert reply.status_code == status
    error = reply.get_json()["error"]
    assert error["code"] == code and error.get("field") == field


def test_how_to_play_errors_are_pages(client):
    assert client.get("/games/chess/how-to-play").status_code == 404
    missing = client.get("/games/trash_cult/how-to-play?table=nosuchtable")
    assert missing.status_code == 404 and missing.mimetype == "text/html"
