"""What the browser tests do on the pages, by data-testid, and what they read back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported lazily: without Playwright the browser fixture skips the tests
    from playwright.sync_api import Page

# Configs that keep a whole game short enough to click through (see docs/web.md).
SHORT = {
    "crazy_cultists": {"variant": "beast"},
    "trash_cult": {"food_needed_4p": "2"},
    "tricky_cultists": {"rounds": "1"},
}
# Crazy Cultists to two candles (beast): still a whole game, with about half the moves of
# SHORT's, for tests whose time is the game's length (each bot move held for a pace) or
# that only need a finished table.
TWO_CANDLES = {**SHORT["crazy_cultists"], "beast_candles_to_win": "2"}

PANEL_READY = """() => {
  const p = document.querySelector('[data-testid=panel]');
  if (!p || p.dataset.busy === '1' || p.dataset.version === '-1') return false;
  return p.dataset.terminal === '1'
    || !!p.querySelector('button[data-action]:not([disabled])');
}"""

PANEL_SETTLED = """() => {
  const p = document.querySelector('[data-testid=panel]');
  return !!p && p.dataset.busy !== '1' && p.dataset.version !== '-1';
}"""

PANEL_MOVED = """(v) => {
  const p = document.querySelector('[data-testid=panel]');
  return !!p && p.dataset.busy !== '1' && (p.dataset.version !== v || p.dataset.terminal === '1');
}"""


def open_table(
    page: Page,
    game: str,
    seats: list[str],
    config: dict[str, str],
    seed: int,
    sit: bool = True,
    name: str = "alice",
) -> str:
    """Fill the lobby's form (`seats`: "human" or "bot:<name>" each) and open the table;
    returns its id once the table page is showing."""
    page.goto("/")
    page.get_by_test_id("player-name").fill(name)
    page.get_by_test_id("player-name").dispatch_event("change")
    page.get_by_test_id("create-game").select_option(game)
    page.get_by_test_id("create-players").fill(str(len(seats)))
    page.get_by_test_id("create-players").dispatch_event("input")
    for i, kind in enumerate(seats):
        page.get_by_test_id(f"seat-kind-{i}").select_option(kind)
    fieldset = page.get_by_test_id(f"config-{game}")
    for field, value in config.items():
        box = fieldset.get_by_test_id(f"config-{field}")
        if not box.is_visible():
            fieldset.locator("details > summary").click()
        if box.evaluate("el => el.tagName") == "SELECT":  # a field with named choices
            box.select_option(value)
        else:
            box.fill(value)
    page.get_by_test_id("create-seed").fill(str(seed))
    sit_box = page.get_by_test_id("create-sit")
    if sit_box.is_checked() != sit:
        sit_box.click()
    page.get_by_test_id("create-submit").click()
    page.wait_for_url("**/tables/*")
    return page.url.split("/tables/")[1].split("?")[0]


def wait_ready(page: Page, timeout: float = 60_000) -> dict[str, Any]:
    """Until the seat must act (an enabled button) or the game is over; the panel's facts."""
    page.wait_for_function(PANEL_READY, timeout=timeout)
    return panel_facts(page)


def panel_facts(page: Page) -> dict[str, Any]:
    return page.evaluate(
        """() => {
          const p = document.querySelector('[data-testid=panel]');
          return {version: Number(p.dataset.version), terminal: p.dataset.terminal === '1',
                  seat: Number(p.dataset.seat), status: p.dataset.status,
                  legal: Number(p.dataset.legal)};
        }"""
    )


def click_first_action(page: Page, version: int) -> None:
    """The seat's first legal action, then wait until the panel shows a newer position."""
    page.locator("[data-testid=panel] button[data-action]:not([disabled])").first.click()
    page.wait_for_function(PANEL_MOVED, arg=str(version), timeout=60_000)


def play_to_end(page: Page, max_clicks: int = 500, on_click=None) -> int:
    """Click the first legal button whenever asked, until the winner is shown."""
    clicks = 0
    while True:
        facts = wait_ready(page)
        if facts["terminal"]:
            return clicks
        assert clicks < max_clicks, "the game did not end"
        click_first_action(page, facts["version"])
        clicks += 1
        if on_click is not None:
            on_click(clicks)


def token_of(page: Page, table: str, seat: int) -> str:
    return page.evaluate("([t, s]) => localStorage.getItem(`cultists:seat:${t}:${s}`)", [table, seat])


def session_headers(page: Page) -> dict[str, str]:
    """The guest session the page signed in with (static/guest.js), as a request header:
    a seat taken from a page is bound to that player, so its token goes with it."""
    token = page.evaluate(
        "() => (JSON.parse(localStorage.getItem('cultists:session') || 'null') || {}).token"
    )
    return {"X-Player-Token": token} if token else {}


def hand_in_dom(page: Page, game: str, seat: int, root: str = "[data-testid=panel]") -> list:
    """The cards shown as `seat`'s hand: names (ids for Tricky Cultists, whose cards are unique)."""
    attr = "data-card-id" if game == "tricky_cultists" else "data-card"
    return page.eval_on_selector_all(
        f"{root} [data-testid=hand][data-seat='{seat}'] [data-testid=card]",
        f"els => els.map(e => e.getAttribute('{attr}'))",
    )


def hand_in_view(game: str, view: dict) -> list:
    hand = view.get("hand", [])
    if game == "tricky_cultists":
        return [str(c["id"]) for c in hand]
    return list(hand)


def card_ids_in_dom(page: Page) -> set[str]:
    return set(
        page.eval_on_selector_all("[data-card-id]", "els => els.map(e => e.getAttribute('data-card-id'))")
    )


def sign_in_as(page: Page, redis_client, role: str) -> str:
    """Sign the page's browser in as a new account holding `role` (made as `cultists
    admin create-user` makes it); the username."""
    from tests.support.staff import PASSWORD, make_account

    username = make_account(redis_client, role)
    sign_in(page, username, PASSWORD)
    return username


def sign_in(page: Page, username: str, password: str) -> None:
    """Sign the page's browser in as `username`, through the account page's own call."""
    page.goto("/account")
    page.evaluate(
        """async ([username, password]) => {
            const reply = await fetch("/api/sessions", {method: "POST",
              headers: {"Content-Type": "application/json"}, body: JSON.stringify({username, password})});
            if (!reply.ok) throw new Error(`sign-in: ${reply.status}`);
            CultistsPlayer.use(await reply.json());
        }""",
        [username, password],
    )
