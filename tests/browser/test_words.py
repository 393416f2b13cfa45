"""Issue 31: the page names the engines' log lines (move words and the log, common.js's
`nameSeats`) in the same words as the server does (the end screen and the last-move line,
pages/history.py's `name_seats`): every engine line, read by the seat it names and by
another seat, in real Chromium."""

from __future__ import annotations

from services.gateway.pages.history import name_seats
from tests.gateway.test_move_words import NAMES, engine_lines


def test_the_page_and_the_server_name_every_engine_line_alike(new_context):
    page = new_context().new_page()
    page.goto("/")
    page.wait_for_function("() => typeof Cultists !== 'undefined' && !!Cultists.nameSeats")
    lines = engine_lines()
    for me in (0, 1, -1):
        in_page = page.evaluate(
            "([lines, names, me]) => lines.map((l) => Cultists.nameSeats(l, names, me))", [lines, NAMES, me]
        )
        assert in_page == [name_seats(line, NAMES, me) for line in lines], me
