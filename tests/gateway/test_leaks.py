"""No answer of the gateway holds another seat's hidden cards (issue 15, item 4).

Random games per title are played through the HTTP API by their seats' tokens. At every
checked position, every seat's and a spectator's `/view` (and the seats' `/legal`) are
compared with the full state in Redis:

- the answer must equal the view of a state in which every card the viewer cannot see
  was re-dealt (`State.resample_hidden`): were any hidden card in it, the re-deal would
  change it;
- no card id of another seat's hand (the hidden zone every title has) appears as a card
  id in it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from services.engines.core.rng import Rng
from services.engines.core.serial import json_from_bytes, state_from_bytes, state_to_bytes
from services.platform.keys import table_key
from services.platform.packing import unpack_state

from .conftest import bearer
from .support import EngineProbe

GAMES = {
    # Dark Powers on: its looks (Ouija, Hail, Scrying Bones) widen what a view could leak.
    "crazy_cultists": {"players": 3, "config": {"dark_powers": True}},
    "trash_cult": {"players": 3, "config": {"food_needed_3p": 2}},
    "tricky_cultists": {"players": 4, "config": {"rounds": 1}},
}
GAMES_PER_TITLE = 2
CHECK_EVERY = 3  # positions checked: every third one, and the last
MAX_MOVES = 400


def card_ids(value: Any, out: set[int] | None = None) -> set[int]:
    """Integers under an "id" key anywhere in a JSON answer: the card ids it names."""
    out = set() if out is None else out
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "id" and isinstance(item, int) and not isinstance(item, bool):
                out.add(item)
            else:
                card_ids(item, out)
    elif isinstance(value, list):
        for item in value:
            card_ids(item, out)
    return out


def _check(
    client, app, probe: EngineProbe, game: str, tid: str, tokens: dict[int, str], rng: random.Random
) -> int:
    """Checks one position; how many viewers had hidden cards that the re-deal moved."""
    raw = unpack_state(app.extensions["cultists"].redis.hget(table_key(tid), "state"))
    moved = 0
    doc = json_from_bytes(raw)
    hands = doc.get("hands", [])
    for viewer in [-1, *tokens]:
        headers = bearer(tokens[viewer]) if viewer >= 0 else {}
        answer = client.get(f"/api/tables/{tid}/view", headers=headers).get_json()
        redealt = state_from_bytes(raw)
        redealt.resample_hidden(viewer, Rng(rng.getrandbits(63)))
        moved += redealt.to_json() != doc
        expected = probe.view(game, state_to_bytes(redealt), viewer)
        assert answer["view"] == expected, (
            f"{game} seat {viewer}'s view changes when hidden cards are re-dealt"
        )
        others = {c for seat, hand in enumerate(hands) if seat != viewer for c in hand}
        # Card ids sit in the view and in actions' details (an action's own "id" is its
        # action number, not a card).
        said = card_ids(answer["view"])
        actions = answer["legal_actions"]
        if viewer >= 0:
            actions = (
                actions + client.get(f"/api/tables/{tid}/legal", headers=headers).get_json()["legal_actions"]
            )
        for action in actions:
            card_ids(action["detail"], said)
        assert not said & others, f"{game}: seat {viewer} was told of cards in another seat's hand"
    return moved


@pytest.mark.parametrize("game", sorted(GAMES))
def test_no_answer_holds_another_seats_hidden_cards(client, app, engines, game):
    probe = EngineProbe(engines)
    rng = random.Random(f"leaks-{game}")
    moved = 0
    try:
        for _ in range(GAMES_PER_TITLE):
            setup = GAMES[game]
            table = client.post("/api/tables", json={"game": game, **setup}).get_json()
            tid = table["table"]
            tokens = {
                s: client.post(f"/api/tables/{tid}/seats/{s}").get_json()["token"]
                for s in range(setup["players"])
            }
            for move in range(MAX_MOVES):
                if move % CHECK_EVERY == 0:
                    moved += _check(client, app, probe, game, tid, tokens, rng)
                public = client.get(f"/api/tables/{tid}/view").get_json()
                if public["terminal"]:
                    break
                seat = public["to_act"][0]
                legal = client.get(f"/api/tables/{tid}/legal", headers=bearer(tokens[seat])).get_json()
                action = rng.choice(legal["legal_actions"])["id"]
                reply = client.post(
                    f"/api/tables/{tid}/actions",
                    json={"action": action, "version": legal["version"]},
                    headers=bearer(tokens[seat]),
                )
                assert reply.status_code == 200, reply.get_json()
            moved += _check(client, app, probe, game, tid, tokens, rng)
    finally:
        probe.close()
    assert moved > 0, "the re-deals moved hidden cards, so a view holding one would have differed"
