"""Two players in two browser contexts (separate storage, as two people would be) at one
table: each page shows exactly its own seat's hand as the API's private view has it, never
the other seat's, and a spectator's page shows no hand at all."""

from __future__ import annotations

import pytest

from services.engines.registry import available_games

from .support import (
    PANEL_SETTLED,
    SHORT,
    card_ids_in_dom,
    click_first_action,
    hand_in_view,
    open_table,
    session_headers,
    token_of,
)

GAMES = available_games()
CLICKS = 8  # enough to see hands change hands; whole games are played in test_play.py

SNAPSHOT = """([seat, attr]) => {
  const p = document.querySelector('[data-testid=panel]');
  if (!p || p.dataset.busy === '1') return null;
  const cards = [...p.querySelectorAll(`[data-testid=hand][data-seat='${seat}'] [data-testid=card]`)];
  return {version: Number(p.dataset.version), terminal: p.dataset.terminal === '1',
          hand: cards.map(e => e.getAttribute(attr)),
          hands: [...p.querySelectorAll('[data-testid=hand]')].map(e => Number(e.dataset.seat)),
          privates: [...p.querySelectorAll('[data-testid^=private-]')].map(e => e.dataset.testid),
          acting: !!p.querySelector('button[data-action]:not([disabled])')};
}"""


CAUGHT_UP = """(v) => {
  const p = document.querySelector('[data-testid=panel]');
  return !!p && Number(p.dataset.version) >= v;
}"""


def _check(page, game: str, table: str, seat: int, other_token: str, other_session: dict[str, str]) -> dict:
    """The page's hand is the API's private view of its seat, at the same version, and no
    card of the other seat's hand is anywhere on it; retried if the table moves between
    the two reads."""
    attr = "data-card-id" if game == "tricky_cultists" else "data-card"
    token = token_of(page, table, seat)
    for _attempt in range(200):
        page.wait_for_function(PANEL_SETTLED)
        seen = page.evaluate(SNAPSHOT, [seat, attr])
        if seen is None:
            continue
        mine = page.request.get(
            f"/api/tables/{table}/view", headers={"X-Seat-Token": token, **session_headers(page)}
        ).json()
        theirs = page.request.get(
            f"/api/tables/{table}/view", headers={"X-Seat-Token": other_token, **other_session}
        ).json()
        if not mine["version"] == theirs["version"] == seen["version"]:
            # The table moved between the reads (bots), or the page has yet to catch up.
            page.wait_for_function(CAUGHT_UP, arg=mine["version"], timeout=15_000)
            continue
        assert seen["hand"] == hand_in_view(game, mine["view"]), "the page shows the seat's own hand"
        assert seen["hands"] == [seat], "no other seat's hand is on the page"
        assert seen["privates"] == [f"private-{seat}"], "no other seat's private zone is on the page"
        if game == "tricky_cultists":  # cards are unique: none of theirs may show here
            assert not set(hand_in_view(game, theirs["view"])) & card_ids_in_dom(page)
        html = page.content()
        assert token not in html and other_token not in html and token not in page.url
        return seen
    notice = page.get_by_test_id("notice").inner_text()
    raise AssertionError(
        f"the table never held still long enough to compare: page {seen}, api {mine['version']}/"
        f"{theirs['version']}, notice {notice!r}"
    )


@pytest.mark.parametrize("game", GAMES)
def test_second_seat_never_sees_the_first_seats_hand(game, new_context, screenshots):
    first = new_context().new_page()
    seats = ["human", "human", "bot:heuristic", "bot:heuristic"]
    table = open_table(first, game, seats, SHORT[game], seed=5, name="alice")
    first.get_by_test_id("waiting").wait_for()

    second = new_context().new_page()
    second.goto("/")
    second.get_by_test_id("player-name").fill("bob")
    second.get_by_test_id("player-name").dispatch_event("change")
    second.get_by_test_id(f"join-{table}-1").click()
    second.wait_for_url(f"**/tables/{table}?seat=1")
    assert second.get_by_test_id("who-text").inner_text() == "You are seat 1"
    first.wait_for_selector("[data-testid=panel][data-status=playing]")

    spectator = new_context().new_page()
    spectator.goto(f"/tables/{table}")
    spectator.wait_for_selector("[data-testid=panel][data-status=playing]")
    assert spectator.get_by_test_id("who-text").inner_text() == "Watching"
    assert spectator.locator("[data-testid=hand], [data-testid=private]").count() == 0

    tokens = {0: token_of(first, table, 0), 1: token_of(second, table, 1)}
    assert tokens[0] and tokens[1] and tokens[0] != tokens[1]
    assert token_of(second, table, 0) is None, "the second browser holds no token of seat 0"

    clicks = 0
    pages = {0: first, 1: second}
    sessions = {s: session_headers(p) for s, p in pages.items()}
    assert sessions[0] != sessions[1], "two browsers, two guest players"
    while clicks < CLICKS:
        seen = {s: _check(p, game, table, s, tokens[1 - s], sessions[1 - s]) for s, p in pages.items()}
        if seen[0]["terminal"]:
            break
        acting = [s for s in pages if seen[s]["acting"]]
        if not acting:
            first.wait_for_timeout(50)  # bots are moving
            continue
        click_first_action(pages[acting[0]], seen[acting[0]]["version"])
        clicks += 1
    second.screenshot(path=str(screenshots / f"{game}-second-seat-desktop.png"), full_page=True)
    assert spectator.locator("[data-testid=hand], [data-testid=private]").count() == 0
