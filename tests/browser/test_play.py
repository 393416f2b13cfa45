"""A whole game of each title in headless Chromium: opened in the lobby with three bots,
played to the end by clicking the page's action buttons, the winner shown checked against
the API and against the rules library replaying the table's record; then the replay page
stepped forward and back, from one seat and with all cards open."""

from __future__ import annotations

import pytest

from services.engines.core.play import replay as rebuild
from services.engines.registry import available_games, load_game

from .conftest import DESKTOP, PHONE
from .support import SHORT, hand_in_dom, hand_in_view, open_table, play_to_end

GAMES = available_games()
SEED = 11


def _shoot(page, screenshots, name: str) -> None:
    """Desktop and phone-sized pictures of the page as it is now."""
    page.screenshot(path=str(screenshots / f"{name}-desktop.png"), full_page=True)
    page.set_viewport_size(PHONE)
    page.wait_for_timeout(100)
    page.screenshot(path=str(screenshots / f"{name}-phone.png"), full_page=True)
    page.set_viewport_size(DESKTOP)


@pytest.mark.parametrize("game", GAMES)
def test_whole_game_by_clicking(game, new_context, screenshots):
    page = new_context().new_page()
    seats = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]
    table = open_table(page, game, seats, SHORT[game], seed=SEED)
    assert page.get_by_test_id("who-text").inner_text() == "You are seat 0"

    def picture(clicks: int) -> None:
        if clicks == 3:  # mid-game, with the board filled in
            page.wait_for_function("() => !document.querySelector('[data-testid=panel]').dataset.busy")
            _shoot(page, screenshots, f"{game}-table")

    clicks = play_to_end(page, on_click=picture)
    assert clicks > 0

    # The winner shown is the API's and the engine's.
    shown = page.get_by_test_id("winner").get_attribute("data-winners")
    api = page.request.get(f"/api/tables/{table}").json()
    assert api["status"] == "finished"
    assert shown == ",".join(map(str, api["winners"]))
    record = page.request.get(f"/api/tables/{table}/replay").json()
    spec = load_game(game)
    key = bytes.fromhex(record["deal_key"]) if "deal_key" in record else None  # docs/fairness.md
    final = rebuild(
        spec, spec.make_config(record["config"]), record["players"], record["seed"], record["actions"], key
    )
    assert final.is_terminal() and final.winners() == api["winners"]
    assert {k: str(v) for k, v in record["config"].items()} == SHORT[game], "the form's config was used"
    human = sum(1 for seat, _ in record["actions"] if seat == 0)
    assert human == clicks, "every human move was one click on the page"
    if clicks < 3:
        _shoot(page, screenshots, f"{game}-table")
    _shoot(page, screenshots, f"{game}-table-end")
    assert page.get_by_test_id("event-log").locator("li").count() > 0, "the event log was streamed"

    # The replay: forward, back, one seat's view, all cards open, the end.
    page.get_by_test_id("replay-link").click()
    page.wait_for_url("**/replay?*")
    panel = page.get_by_test_id("replay-panel")
    steps = int(page.get_by_test_id("replay-page").get_attribute("data-steps"))
    assert steps == len(record["actions"])
    page.wait_for_selector("[data-testid=replay-panel][data-step='0']")
    for expected in (1, 2, 3):
        page.get_by_test_id("replay-next").click()
        page.wait_for_selector(f"[data-testid=replay-panel][data-step='{expected}']")
    page.get_by_test_id("replay-prev").click()
    page.wait_for_selector("[data-testid=replay-panel][data-step='2']")
    label = panel.get_by_test_id("replay-move-label")
    if label.get_attribute("data-open") == "1":  # a public move: its label, as the API has it
        assert label.inner_text() == api_label(page, table, 2)
    else:  # a private move (a kept agenda): the spectator view does not say which (issue 17)
        assert label.inner_text() == "decided (hidden in this view)"

    page.get_by_test_id("replay-seat").select_option("0")
    page.wait_for_selector("[data-testid=replay-panel][data-seat='0'][data-step='2']")
    step = page.request.get(f"/api/replays/steps/2?table={table}&seat=0").json()
    assert hand_in_dom(page, game, 0, "[data-testid=replay-panel]") == hand_in_view(
        game, step["views"][0]["view"]
    )

    page.get_by_test_id("replay-seat").select_option("all")
    page.wait_for_selector("[data-testid=replay-panel][data-seat='all'][data-step='2']")
    assert panel.get_by_test_id("replay-move-label").inner_text() == api_label(page, table, 2)
    every = page.request.get(f"/api/replays/steps/2?table={table}&seat=all").json()
    for seat, view in enumerate(every["views"]):
        assert hand_in_dom(page, game, seat, "[data-testid=all-open]") == hand_in_view(game, view["view"])
    middle = steps // 2
    page.locator(f"[data-testid=move-list] [data-goto='{middle}']").click()
    page.wait_for_selector(f"[data-testid=replay-panel][data-seat='all'][data-step='{middle}']")
    _shoot(page, screenshots, f"{game}-replay-all-open")

    page.get_by_test_id("replay-last").click()
    page.wait_for_selector(f"[data-testid=replay-panel][data-step='{steps}']")
    assert panel.get_by_test_id("winner").get_attribute("data-winners") == shown
    page.get_by_test_id("replay-first").click()
    page.wait_for_selector("[data-testid=replay-panel][data-step='0']")
    assert "step=0" in page.url and "seat=all" in page.url


def api_label(page, table: str, step: int) -> str:
    summary = page.request.get(f"/api/replays?table={table}").json()
    return summary["moves"][step - 1]["label"]
