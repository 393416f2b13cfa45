"""Issue 31, item 4, in real Chromium: a game against three Steady bots played to its end
shows why it ended, the ranking with every seat's score, the decisive move's replay step
(which opens there) and a Rematch that seats the player at a new table of the same game."""

from __future__ import annotations

from .support import SHORT, open_table, play_to_end

BOTS3 = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]


def test_end_screen_explains_and_offers_a_rematch(new_context, screenshots):
    page = new_context().new_page()
    tid = open_table(page, "crazy_cultists", BOTS3, SHORT["crazy_cultists"], seed=4)
    play_to_end(page)
    winner = page.get_by_test_id("winner")
    assert winner.get_by_test_id("end-why").inner_text().startswith("Why it ended:")
    rows = winner.get_by_test_id("final-row")
    assert rows.count() == 4
    places = [rows.nth(i).get_attribute("data-place") for i in range(4)]
    assert places[0] == "1st" and places == sorted(places), places
    table = page.request.get(f"/api/tables/{tid}").json()
    first = int(rows.nth(0).get_attribute("data-seat"))
    assert first in table["winners"] or not table["winners"]
    assert "you" in winner.inner_text()
    page.screenshot(path=str(screenshots / "end-crazy_cultists-desktop.png"), full_page=True)

    decisive = page.get_by_test_id("decisive-link").get_attribute("href")
    assert f"step={table['version']}" in decisive

    page.get_by_test_id("rematch").click()
    page.wait_for_url(lambda url: "/tables/" in url and tid not in url)
    again = page.url.split("/tables/")[1].split("?")[0]
    new = page.request.get(f"/api/tables/{again}").json()
    assert new["game"] == "crazy_cultists" and new["config"] == table["config"]
    assert [s["kind"] for s in new["seats"]] == [s["kind"] for s in table["seats"]]
    assert new["seats"][0]["claimed"], "the player sits at the same seat"
