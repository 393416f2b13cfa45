"""Issue 28, item 5, in real Chromium: the lobby's lists page as `GET /api/tables` does.

With more waiting tables than one page, the lobby says how many there are, its next-page
link reaches the rest, every table shows exactly once over the pages (in the API's
order), and the previous and first-page links lead back; the lists stay on their page
while the lobby refreshes them; a bad cursor in the address is a 400 with the reason in
words and no lists; axe-core finds nothing serious, and a phone's width never scrolls
sideways."""

from __future__ import annotations

from .conftest import PHONE
from .test_enjoy import axe_violations

EXTRA = 57  # more than a page (the lobby's 50), so there are at least two pages
WAITING = "[data-testid=waiting-tables] li[data-table]"


def _open_waiting(app, count: int) -> list[str]:
    """Tables of humans only, none sat at: they stay waiting for players. Opened through
    the platform, as the API opens them (the API holds one address to a few at once)."""
    tables = app.extensions["cultists"].tables
    return [tables.open_table("trash_cult", 2, {}, None, 60.0).id for _ in range(count)]


def _api_waiting(page) -> tuple[list[str], int]:
    """The waiting list as the API pages it, newest first, and its total."""
    ids: list[str] = []
    cursor = ""
    while True:
        body = page.request.get(f"/api/tables?status=waiting&limit=200{cursor}").json()
        ids += [t["table"] for t in body["tables"]]
        if body["next"] is None:
            return ids, body["total"]
        cursor = f"&cursor={body['next']}"


def _shown(page) -> list[str]:
    return page.locator(WAITING).evaluate_all("els => els.map(e => e.dataset.table)")


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")


def test_the_lobby_pages_through_every_waiting_table_once(new_context, app):
    page = new_context(viewport=PHONE).new_page()
    page.goto("/")
    opened = _open_waiting(app, EXTRA)
    expected, total = _api_waiting(page)
    assert set(opened) <= set(expected) and total == len(expected) > 50

    page.goto("/")
    pages = [_shown(page)]
    assert page.get_by_test_id("waiting-total").inner_text() == f"({total} in all)"
    assert page.get_by_test_id("waiting-previous").count() == 0, "the first page has none before it"
    assert page.get_by_test_id("waiting-first").count() == 0
    while page.get_by_test_id("waiting-next").count():
        page.get_by_test_id("waiting-next").click()
        page.wait_for_load_state()
        assert page.get_by_test_id("waiting-total").inner_text() == f"({total} in all)", (
            "every page counts all"
        )
        pages.append(_shown(page))
        assert len(pages) <= total // 50 + 1, "the pages end"
    seen = [tid for shown in pages for tid in shown]
    assert seen == expected, "every waiting table exactly once, in the API's order"
    assert all(len(shown) == 50 for shown in pages[:-1])

    # The last page, at a phone's width: nothing serious for axe, no sideways scrolling.
    problems = [f"axe {v['impact']} {v['id']} {v['nodes']}" for v in axe_violations(page)]
    assert not problems, "\n".join(problems)
    assert _no_sideways_scroll(page)
    assert page.get_by_test_id("waiting-next").count() == 0, "the last page has no next"
    link = page.get_by_test_id("waiting-previous").bounding_box()
    assert link is not None and link["height"] >= 44, "a link a thumb can take"

    # The lobby's refresh keeps the list at the page it shows.
    page.evaluate("() => { window.__tables = document.querySelector('[data-testid=tables-fragment]'); }")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=tables-fragment]') !== window.__tables", timeout=30_000
    )
    assert _shown(page) == pages[-1]

    page.get_by_test_id("waiting-previous").click()
    page.wait_for_load_state()
    assert _shown(page) == pages[-2], "previous shows the page before"
    page.get_by_test_id("waiting-first").click()
    page.wait_for_load_state()
    assert _shown(page) == pages[0]
    assert page.get_by_test_id("waiting-first").count() == 0


def test_a_bad_cursor_says_why_and_shows_no_lists(new_context):
    page = new_context(viewport=PHONE).new_page()
    answer = page.goto("/?waiting=not-a-cursor")
    assert answer is not None and answer.status == 400
    error = page.get_by_test_id("tables-error")
    assert "waiting" in error.inner_text() and error.get_attribute("role") == "alert"
    assert page.locator(WAITING).count() == 0, "no list at a place that does not exist"
    problems = [f"axe {v['impact']} {v['id']} {v['nodes']}" for v in axe_violations(page)]
    assert not problems, "\n".join(problems)
    assert _no_sideways_scroll(page)
    fragment = page.request.get("/lobby/tables?waiting=not-a-cursor")
    assert fragment.status == 400 and "waiting" in fragment.text()
    backwards = page.request.get("/lobby/tables?playing=%3Cnot-a-cursor")
    assert backwards.status == 400 and "playing" in backwards.text()
    page.get_by_test_id("tables-restart").click()
    page.wait_for_load_state()
    assert page.get_by_test_id("waiting-total").is_visible()
