"""A guest keeps their player (issue 15): on the account page, linked from the site
navigation, a browser's guest takes a username and password; on another device (a
separate browser context: its own storage, its own guest) signing in with them makes that
browser play as the same player, and the pages' requests then carry that player's
session. A wrong password says so and changes nothing."""

from __future__ import annotations

from .support import session_headers
from .test_enjoy import axe_violations

PASSWORD = "correct horse battery"


def _player_on_page(page) -> str:
    shown = page.get_by_test_id("account-player")
    shown.wait_for()
    page.wait_for_function("() => document.querySelector('[data-testid=account-player]').dataset.player")
    return shown.get_attribute("data-player") or ""


def test_a_guest_upgrades_and_signs_in_on_another_device(new_context):
    first = new_context().new_page()
    first.goto("/")
    first.get_by_test_id("nav-account").click()
    first.wait_for_url("**/account")
    status = first.get_by_test_id("account-status")
    first.wait_for_function("() => document.querySelector('[data-testid=account-status]').dataset.kind")
    assert status.get_attribute("data-kind") == "guest"
    guest = _player_on_page(first)
    assert first.request.get("/api/players/me", headers=session_headers(first)).json()["player"] == guest

    # A password too short is the API's 400, shown on the page; the player stays a guest.
    first.get_by_test_id("upgrade-username").fill("hecate")
    # (past the form's own check, which would stop it before the API sees it)
    first.get_by_test_id("upgrade-password").evaluate("e => e.removeAttribute('minlength')")
    first.get_by_test_id("upgrade-password").fill("short")
    first.get_by_test_id("upgrade-submit").click()
    error = first.get_by_test_id("upgrade-error")
    error.wait_for()
    assert "password" in error.inner_text()
    assert status.get_attribute("data-kind") == "guest"

    first.get_by_test_id("upgrade-password").fill(PASSWORD)
    first.get_by_test_id("upgrade-submit").click()
    first.wait_for_function(
        "() => document.querySelector('[data-testid=account-status]').dataset.kind === 'account'"
    )
    assert "hecate" in status.inner_text()
    assert first.get_by_test_id("upgrade-box").is_hidden()
    me = first.request.get("/api/players/me", headers=session_headers(first)).json()
    assert me == {**me, "player": guest, "kind": "account", "username": "hecate"}

    # Another device: a guest of its own until it signs in with the username.
    second = new_context().new_page()
    second.goto("/account")
    second.wait_for_function("() => document.querySelector('[data-testid=account-status]').dataset.kind")
    assert _player_on_page(second) != guest

    second.get_by_test_id("login-username").fill("hecate")
    second.get_by_test_id("login-password").fill("wrong password")
    second.get_by_test_id("login-submit").click()
    second.get_by_test_id("login-error").wait_for()
    assert "wrong password" in second.get_by_test_id("login-error").inner_text()
    assert second.get_by_test_id("account-status").get_attribute("data-kind") == "guest"

    second.get_by_test_id("login-password").fill(PASSWORD)
    second.get_by_test_id("login-submit").click()
    second.wait_for_function(
        "() => document.querySelector('[data-testid=account-status]').dataset.kind === 'account'"
    )
    assert second.get_by_test_id("account-player").get_attribute("data-player") == guest
    # Every page of that browser now plays as the account: the lobby's requests carry it.
    second.goto("/")
    second.get_by_test_id("nav-account").click()
    second.wait_for_url("**/account")
    second.wait_for_function(
        "() => document.querySelector('[data-testid=account-status]').dataset.kind === 'account'"
    )
    assert _player_on_page(second) == guest
    assert second.request.get("/api/players/me", headers=session_headers(second)).json()["player"] == guest
    # The page is usable without sight too (the same check every other page passes).
    assert axe_violations(second) == []
