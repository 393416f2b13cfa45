"""How bench/web_play.py turns the panels a page drew into its figures: a version drawn
twice is one position, a bot move is timed until the next version, and a bot move ended by
the player's own click is counted apart from those the page paced (a forced answer the page
took itself included)."""

from __future__ import annotations

from bench.web_play import TOLERANCE_MS, follow_figures


def _panel(version: int, at: float, mover: int | None) -> dict:
    return {"version": version, "at": at, "seat": 0, "terminal": False, "mover": mover}


def test_bot_moves_are_timed_until_the_next_version():
    panels = [
        _panel(-1, 0, None),  # the loading panel
        _panel(0, 10, None),
        _panel(1, 100, 0),  # you
        _panel(2, 200, 1),  # a bot: up 400 ms
        _panel(2, 300, 1),  # drawn again at its version: the same position
        _panel(3, 600, 2),  # a bot: up 150 ms, too short
        _panel(4, 750, 3),  # a bot: ended by your move 50 ms later
        _panel(5, 800, 0),
        _panel(6, 900, 1),  # the last: never replaced, not timed
    ]
    figures = follow_figures(panels, 400)
    assert figures["bot_moves"] == 3
    assert figures["bot_moves_before_own_move"] == 1
    assert figures["bot_moves_page_paced"] == 2
    assert figures["bot_moves_visible_for_pace"] == 1
    assert figures["visible_share"] == 0.5
    assert figures["shortest_bot_move_ms"] == 150
    assert figures["versions_in_order"]


def test_a_stay_within_the_timer_tolerance_counts_as_the_pace():
    panels = [
        _panel(0, 0, 1),
        _panel(1, 400 - TOLERANCE_MS, 2),
        _panel(2, 2 * (400 - TOLERANCE_MS) - 1, 3),
        _panel(3, 2000, 1),
    ]
    figures = follow_figures(panels, 400)
    assert figures["bot_moves_page_paced"] == 3
    assert figures["bot_moves_visible_for_pace"] == 2, "380 ms counts, 379 ms does not"
    assert figures["visible_share"] == round(2 / 3, 4)


def test_at_the_default_pace_moves_are_also_counted_against_400_ms():
    panels = [
        _panel(0, 0, None),
        _panel(1, 100, 1),  # a bot: up 900 ms, the pace
        _panel(2, 1000, 2),  # a bot: up 500 ms, under the pace but not flashing past
        _panel(3, 1500, 3),  # a bot: up 300 ms, flashing past
        _panel(4, 1800, 1),
    ]
    figures = follow_figures(panels, 900)
    assert figures["bot_moves_page_paced"] == 3
    assert figures["bot_moves_visible_for_pace"] == 1
    assert figures["bot_moves_visible_400ms"] == 2
    assert figures["visible_400ms_share"] == round(2 / 3, 4)


def test_a_bot_move_ended_by_the_page_s_own_answer_is_held_to_the_pace():
    """The page takes a forced answer for the player (no click): the bot move that answer
    replaced was ended by the page, so it counts against the pace like any other."""
    panels = [
        _panel(0, 0, None),
        _panel(1, 100, 1),  # a bot: the bench clicked 300 ms in, its move next
        _panel(2, 400, 0),
        _panel(3, 500, 2),  # a bot: the page answered for the player after 200 ms
        _panel(4, 700, 0),
        _panel(5, 800, 3),
    ]
    figures = follow_figures(panels, 400, clicks=[395.0])
    assert figures["bot_moves_before_own_move"] == 1
    assert figures["bot_moves_page_paced"] == 1
    assert figures["shortest_bot_move_ms"] == 200
    assert figures["visible_share"] == 0.0
    assert follow_figures(panels, 400)["bot_moves_page_paced"] == 0, "without clicks: both counted apart"
