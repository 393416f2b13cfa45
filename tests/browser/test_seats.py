"""Issue 31, item 5, in real Chromium: a seat taken while signed in follows the account to
another device (sign in there, open the table, play the seat); a spectator sees no player
controls; a finished table's replay names its seats as the live page did."""

from __future__ import annotations

from tests.support.staff import PASSWORD, make_account

from .support import PANEL_READY, open_table, play_to_end, sign_in

BOTS = ["human", "bot:heuristic", "bot:heuristic", "bot:heuristic"]


def test_a_signed_in_seat_follows_the_account(new_context, redis_client):
    username = make_account(redis_client, "player")
    laptop = new_context().new_page()
    sign_in(laptop, username, PASSWORD)
    tid = open_table(laptop, "crazy_cultists", BOTS, {"variant": "beast"}, seed=2)
    laptop.wait_for_function(PANEL_READY, timeout=60_000)
    assert laptop.get_by_test_id("auto-pass").is_visible(), "a player has the player controls"

    phone = new_context().new_page()
    sign_in(phone, username, PASSWORD)
    phone.goto(f"/tables/{tid}")
    phone.wait_for_function(PANEL_READY, timeout=60_000)
    assert phone.get_by_test_id("who-text").inner_text() == "You are seat 0"
    assert phone.locator("[data-testid=panel]").get_attribute("data-seat") == "0"
    assert "Your hand" in phone.get_by_test_id("private").inner_text(), "your own seat is you"
    assert "(you)" in phone.locator("[data-testid=board] .seat.me h3").inner_text()
    before = int(phone.locator("[data-testid=panel]").get_attribute("data-version"))
    phone.locator("[data-testid=panel] button[data-action]").first.click()
    phone.wait_for_function(
        "(v) => Number(document.querySelector('[data-testid=panel]').dataset.version) > v", arg=before
    )

    spectator = new_context().new_page()
    spectator.goto(f"/tables/{tid}")
    spectator.wait_for_function(
        "() => Number(document.querySelector('[data-testid=panel]').dataset.version) >= 0"
    )
    assert spectator.get_by_test_id("who-text").inner_text() == "Watching"
    for control in ("auto-pass", "turn-sound"):
        assert spectator.get_by_test_id(control).is_hidden(), f"a spectator has no {control}"
    assert spectator.locator("[data-testid=panel] button[data-action]").count() == 0

    # The table chat: the seated player posts, the spectator reads it, as text.
    assert spectator.get_by_test_id("chat-form").is_hidden(), "a spectator reads, never posts"
    phone.get_by_test_id("chat-input").fill("<img src=x data-x=1>good luck")
    phone.get_by_test_id("chat-send").click()
    phone.get_by_test_id("chat-message").first.wait_for()
    assert phone.get_by_test_id("chat-message").first.inner_text() == "you: <img src=x data-x=1>good luck"
    spectator.get_by_test_id("chat-message").first.wait_for(timeout=15_000)
    assert (
        spectator.get_by_test_id("chat-message")
        .first.inner_text()
        .endswith(": <img src=x data-x=1>good luck")
    )
    assert spectator.locator("[data-testid=chat] img").count() == 0, "escaped, never markup"

    play_to_end(phone)
    live_names = phone.evaluate(
        "() => JSON.parse(document.querySelector('[data-testid=panel]').dataset.names)"
    )
    replay = phone.request.get(f"/api/replays?table={tid}").json()
    assert replay["seat_names"] == live_names, "the replay names the seats as the live page did"
    phone.goto(f"/replay?table={tid}&seat=all&step=2")
    phone.locator("main .private").first.wait_for()
    opened = phone.locator("main").inner_text()
    assert "Your hand" not in opened and f"{live_names[1]}: hand" in opened, "a replay names every hand"
