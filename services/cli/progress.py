"""A progress bar that still says something when the output is not a terminal.

rich draws its bars only on a terminal: redirected to a file or a CI log, a `Progress`
prints nothing until it stops, so an hour of training looked hung. `LineProgress` is a
`Progress` that, off a terminal, writes one plain line each time a task passes another
tenth of its total (and when it completes), which a log keeps and `tail -f` shows.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import Progress, TaskID

STEPS = 10  # lines per task off a terminal: one at each tenth of the way


class LineProgress(Progress):
    def __init__(self, *columns: Any, console: Console | None = None, **kwargs: Any) -> None:
        super().__init__(*columns, console=console, **kwargs)
        self._lines = not self.console.is_terminal
        self._said: dict[TaskID, int] = {}

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        self._say(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._say(task_id)

    def _say(self, task_id: TaskID) -> None:
        if not self._lines:
            return
        task = self._tasks[task_id]
        if not task.total:
            return
        step = min(STEPS, int(STEPS * task.completed / task.total))
        if step <= self._said.get(task_id, -1):
            return
        self._said[task_id] = step
        self.console.print(
            f"{task.description}: {task.completed:,.0f}/{task.total:,.0f} ({task.completed / task.total:.0%})",
            markup=False,
            highlight=False,
        )
