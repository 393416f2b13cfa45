"""Long work shows progress wherever its output goes: a bar on a terminal, and plain lines
in a redirected log, where rich's bars print nothing until they stop."""

from __future__ import annotations

import io

from rich.console import Console

from services.cli.progress import LineProgress


def _run(console: Console, total: int, start: int = 0) -> list[str]:
    with LineProgress(console=console) as progress:
        task = progress.add_task("games", total=total, completed=start)
        for _ in range(total - start):
            progress.update(task, advance=1)
    return [line for line in console.file.getvalue().splitlines() if line.startswith("games: ")]  # type: ignore[attr-defined]


def test_a_redirected_bar_says_each_tenth_once():
    lines = _run(Console(file=io.StringIO(), force_terminal=False, width=100), 200)
    # The first step taken, then each tenth passed, the end included.
    assert lines == ["games: 1/200 (0%)"] + [f"games: {20 * k}/200 ({10 * k}%)" for k in range(1, 11)]


def test_a_resumed_task_says_where_it_resumed():
    lines = _run(Console(file=io.StringIO(), force_terminal=False, width=100), 100, start=50)
    assert lines[0] == "games: 51/100 (51%)" and lines[-1] == "games: 100/100 (100%)"


def test_a_terminal_gets_the_bar_not_lines():
    lines = _run(Console(file=io.StringIO(), force_terminal=True, width=100), 50)
    assert lines == []
