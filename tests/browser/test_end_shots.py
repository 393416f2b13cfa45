"""Issue 31: each game's end screen, desktop 1366x768 and phone 390x844, after a whole game
against three Steady bots in real Chromium; the screenshots are the ones docs/web.md shows
(docs/images/web-<game>-end-<size>.png), so the docs' pictures are what the page draws."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import SHORT, open_table, play_to_end

BOTS3 = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
SIZES = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("game", sorted(SHORT))
def test_end_screen_screenshot(new_context, game, size):
    page = new_context(viewport=SIZES[size]).new_page()
    open_table(page, game, BOTS3, SHORT[game], seed=7)
    play_to_end(page)
    winner = page.get_by_test_id("winner")
    winner.wait_for(state="visible")
    assert winner.get_by_test_id("end-why").inner_text().startswith("Why it ended:")
    assert winner.get_by_test_id("final-row").count() == 4, "every seat ranked"
    winner.scroll_into_view_if_needed()
    # What a player sees at the end: the viewport, with the end screen brought into it.
    IMAGES.mkdir(parents=True, exist_ok=True)
    shot = IMAGES / f"web-{game}-end-{size}.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000, "a drawn page, not a blank one"
    # The end screen is on the screenshot: it overlaps the viewport.
    box = winner.bounding_box()
    assert box is not None and box["y"] < SIZES[size]["height"] and box["y"] + box["height"] > 0
