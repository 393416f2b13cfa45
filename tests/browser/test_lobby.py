"""The lobby in the browser: queueing for a match with the wait shown, a table refused with
the engine's words, and a sweep's game opened on the replay page by its URL."""

from __future__ import annotations

import json
from urllib.parse import urlencode

from services.engines.core.play import play_game
from services.engines.registry import load_game

from .conftest import DESKTOP, PHONE
from .support import hand_in_dom, hand_in_view


def test_matchmaking_queue_shows_the_wait_then_seats_both_players(new_context, screenshots):
    pages = []
    for name in ("carol", "dave"):
        page = new_context().new_page()
        page.goto("/")
        page.get_by_test_id("player-name").fill(name)
        page.get_by_test_id("player-name").dispatch_event("change")
        # Trash Cult plays 2 by default; Crazy Cultists only as a sweep variant (CC-2).
        page.get_by_test_id("mm-game").select_option("trash_cult")
        page.get_by_test_id("mm-players").fill("2")
        pages.append(page)

    first, second = pages
    first.get_by_test_id("mm-join").click()
    first.wait_for_selector("[data-testid=mm-status][data-state=queued]")
    assert "Waiting for a 2-player table" in first.get_by_test_id("mm-status").inner_text()
    assert first.get_by_test_id("mm-cancel").is_visible()
    first.screenshot(path=str(screenshots / "lobby-desktop.png"), full_page=True)
    first.set_viewport_size(PHONE)
    first.screenshot(path=str(screenshots / "lobby-phone.png"), full_page=True)
    first.set_viewport_size(DESKTOP)

    second.get_by_test_id("mm-join").click()
    for page in pages:
        page.wait_for_url("**/tables/*?seat=*", timeout=30_000)
        page.wait_for_selector("[data-testid=panel][data-status=playing]")
    tables = {p.get_by_test_id("table-page").get_attribute("data-table") for p in pages}
    assert len(tables) == 1, "both players were seated at the same table"
    seats = {p.get_by_test_id("who-text").inner_text() for p in pages}
    assert seats == {"You are seat 0", "You are seat 1"}


def test_a_table_the_engine_refuses_is_explained(new_context):
    page = new_context().new_page()
    page.goto("/")
    page.get_by_test_id("create-game").select_option("crazy_cultists")
    fieldset = page.get_by_test_id("config-crazy_cultists")
    fieldset.locator("details > summary").click()
    fieldset.get_by_test_id("config-starting_hand").fill("9")
    page.get_by_test_id("create-submit").click()
    error = page.get_by_test_id("create-error")
    error.wait_for()
    assert "starting_hand (9) must not exceed hand_limit (3)" in error.inner_text()
    assert page.url.endswith("/"), "nothing was opened"


def test_named_config_fields_offer_their_choices(new_context):
    """A field that takes names is a choice among the engine's names, not free text."""
    page = new_context().new_page()
    page.goto("/")
    games = {g["game"]: g for g in page.request.get("/api/games").json()["games"]}
    variant = page.get_by_test_id("config-crazy_cultists").get_by_test_id("config-variant")
    options = variant.locator("option").all_inner_texts()
    assert options == games["crazy_cultists"]["config_choices"]["variant"]
    assert {"base", "devilish", "fiendish", "beast"} <= set(options)
    assert variant.input_value() == games["crazy_cultists"]["default_config"]["variant"]
    suits = page.get_by_test_id("config-tricky_cultists").get_by_test_id("config-suits")
    for name in games["tricky_cultists"]["config_choices"]["suits"]:
        assert name in suits.get_attribute("placeholder")


def test_sweep_game_replay_by_url(new_context, screenshots):
    """The link a sweep report gives: the game is played again with its bots in-process."""
    game, players, seed = "crazy_cultists", 4, 3
    config = {"variant": "beast"}
    bots = ["heuristic", "random", "random", "random"]
    spec = load_game(game)
    expected = play_game(spec, spec.make_config(config), players, seed, bots)
    query = {
        "game": game,
        "seed": seed,
        "players": players,
        "config": json.dumps(config),
        "bots": ",".join(bots),
    }

    page = new_context().new_page()
    page.goto(f"/replay?{urlencode(query)}")
    replay = page.get_by_test_id("replay-page")
    assert int(replay.get_attribute("data-steps")) == expected.decisions
    assert replay.get_attribute("data-winners") == ",".join(map(str, expected.winners))
    page.wait_for_selector("[data-testid=replay-panel][data-step='0']")

    page.keyboard.press("End")
    page.wait_for_selector(f"[data-testid=replay-panel][data-step='{expected.decisions}']")
    winners = page.get_by_test_id("replay-panel").get_by_test_id("winner").get_attribute("data-winners")
    assert winners == ",".join(map(str, expected.winners))
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(f"[data-testid=replay-panel][data-step='{expected.decisions - 1}']")

    page.get_by_test_id("replay-seat").select_option("2")
    step = expected.decisions - 1
    page.wait_for_selector(f"[data-testid=replay-panel][data-seat='2'][data-step='{step}']")
    api = page.request.get(f"/api/replays/steps/{step}?{urlencode({**query, 'seat': 2})}").json()
    assert hand_in_dom(page, game, 2, "[data-testid=replay-panel]") == hand_in_view(
        game, api["views"][0]["view"]
    )
    assert f"step={step}" in page.url and "seat=2" in page.url, "the URL names the step shown"
    page.screenshot(path=str(screenshots / "replay-sweep-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.screenshot(path=str(screenshots / "replay-sweep-phone.png"), full_page=True)
