"""Issue 31, item 6, in real Chromium: axe-core finds no serious or critical violation on
any page (the lobby, a table being played, the end screen, Replays, a replay, the account
page, /designer and /ops, the last two signed in with their role) at desktop 1366x768 and
phone 390x844; every page has the one site header (with the way back to the lobby) and a
favicon that loads; at a table the hand comes before the action buttons in Tab order and a
card's actions are reachable in at most three keystrokes."""

from __future__ import annotations

import pytest

from .support import PANEL_READY, SHORT, TWO_CANDLES, open_table, play_to_end, sign_in_as, wait_ready
from .test_enjoy import axe_violations

SIZES = {"desktop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
BOTS3 = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]


def _page_checks(page, what: str) -> list[str]:
    """What is wrong on the page as it is now, in words (empty: nothing)."""
    problems = []
    for v in axe_violations(page):
        problems.append(f"{what}: axe {v['impact']} {v['id']} {v['nodes']}")
    headers = page.locator("header.top").count()
    if headers != 1 or page.get_by_test_id("nav-lobby").count() != 1:
        problems.append(f"{what}: {headers} site headers")
    icon = (
        page.locator("link[rel=icon]").first.get_attribute("href")
        if page.locator("link[rel=icon]").count()
        else None
    )
    if not icon or page.request.get(icon).status != 200:
        problems.append(f"{what}: no favicon ({icon})")
    return problems


@pytest.mark.parametrize("size", sorted(SIZES))
def test_every_page_passes_axe_and_shares_the_header(size, new_context, redis_client):
    context = new_context(viewport=SIZES[size])
    page = context.new_page()
    problems: list[str] = []
    page.goto("/")
    problems += _page_checks(page, "lobby")
    tid = open_table(page, "crazy_cultists", BOTS3, TWO_CANDLES, seed=6)  # a short whole game
    wait_ready(page)
    problems += _page_checks(page, "table")
    play_to_end(page)
    problems += _page_checks(page, "end screen")
    page.goto("/replays")
    problems += _page_checks(page, "replays")
    page.goto(f"/replay?table={tid}&seat=all&step=3")
    page.get_by_test_id("replay-panel").wait_for() if page.get_by_test_id("replay-panel").count() else None
    problems += _page_checks(page, "replay")
    page.goto("/account")
    page.wait_for_load_state("networkidle")  # its first answers are in and drawn
    problems += _page_checks(page, "account")
    for path, role in (("/designer", "designer"), ("/ops", "operator")):
        page.goto(path)
        page.wait_for_load_state("networkidle")
        problems += _page_checks(page, f"{path} as a guest")
        staff = new_context(viewport=SIZES[size]).new_page()
        sign_in_as(staff, redis_client, role)
        staff.goto(path)
        staff.wait_for_load_state("networkidle")  # its panels fill in
        problems += _page_checks(staff, f"{path} as {role}")
    assert not problems, "\n".join(problems)


def test_the_hand_comes_first_and_a_card_plays_in_three_keys(new_context):
    page = new_context().new_page()
    open_table(page, "tricky_cultists", BOTS3, SHORT["tricky_cultists"], seed=5)
    page.wait_for_function(PANEL_READY, timeout=60_000)
    order = page.evaluate(
        """() => {
          const p = document.querySelector('[data-testid=panel]');
          const all = [...p.querySelectorAll('a[href], button:not([disabled]), [tabindex]:not([tabindex="-1"])')]
            .filter((e) => !e.hidden && e.offsetParent !== null);
          const firstCard = all.findIndex((e) => e.matches('[data-testid=private] .card.playable'));
          const firstButton = all.findIndex((e) => e.matches('button[data-action]'));
          return {firstCard, firstButton};
        }"""
    )
    assert 0 <= order["firstCard"] < order["firstButton"], f"the hand comes before the buttons: {order}"
    # Focus is on the first playable card when the turn comes: Enter plays it (a card with
    # one action) or marks its choices, whose first is one Tab away.
    before = int(page.locator("[data-testid=panel]").get_attribute("data-version"))
    focused = page.evaluate("() => document.activeElement.matches('.card.playable')")
    assert focused, "the turn puts focus on the first playable card"
    page.keyboard.press("Enter")
    keys = 1
    if page.locator("[data-testid=panel] .card.selected").count():  # several actions: the first has focus
        page.keyboard.press("Enter")
        keys += 1
    page.wait_for_function(
        "(v) => Number(document.querySelector('[data-testid=panel]').dataset.version) > v", arg=before
    )
    assert keys <= 3
