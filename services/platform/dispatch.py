"""Queueing table work on Celery's `tables` queue, by task name.

Nobody here imports the task code, nor Celery: a task is sent by name through whatever
sender the process was built with (the gateway's light client,
`services.runtime.task_client`, or a worker's own Celery app), to the broker the table
workers listen on. Queueing is a hint, never a duty the request can fail on: a bot
seat also has a short deadline in Redis, so a task lost here (broker hiccup, process killed
right after the commit) is picked up by the beat's deadline sweep a moment later.

Bot moves go out at one of two priorities (kombu's Redis transport keeps one list per
priority step and a worker pops the most urgent non-empty one: services/runtime/broker.py).
A table a human sits at is urgent (0): someone waits for the bots' answer. A table of bots
only is background work (9): its moves wait behind every human's, and it moves in short
stretches (TableService.advance), so a worker is never held from a human for long.

Priority alone still lets every process of a worker sit in a bot-only search when a
human's task arrives (a second's wait per IS-MCTS decision). So bot-only tables also go
to a queue of their own, `bots`, which the deployments give workers of their own: the
`tables` workers' processes are always free for humans. A worker listening on both
(`-Q tables,bots`, as a test's may) still takes the humans' first, by priority.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

log = logging.getLogger("cultists.gateway.dispatch")

QUEUE = "tables"
BOTS_QUEUE = "bots"  # bot-only tables' moves: workers of their own (docs/security.md)
# Redis transport: lower is more urgent; the same steps as the sweeps' (broker.py).
PRIORITY = {"human": 0, "bots_only": 9}


class TaskSender(Protocol):
    """What a Celery app offers for queueing by name (Celery.send_task)."""

    def send_task(self, name: str, args: Any = None, **options: Any) -> Any: ...

    def close(self) -> None: ...


class TaskQueue:
    def __init__(self, sender: TaskSender, queue: str = QUEUE, bots_queue: str = BOTS_QUEUE) -> None:
        self.queue = queue
        self.bots_queue = bots_queue
        self.app = sender

    def _send(
        self, name: str, *args: object, priority: int = PRIORITY["human"], queue: str | None = None
    ) -> None:
        try:
            self.app.send_task(
                f"workers.tables.{name}", args=list(args), queue=queue or self.queue, priority=priority
            )
        except Exception:  # the deadline sweep covers for it
            log.exception("could not queue %s%r", name, args)

    def advance(self, table_id: str, bots_only: bool = False) -> None:
        """Let the bots whose turn it is at this table move; behind every human's table
        when nobody human sits at this one, and on the bots' own queue."""
        if bots_only:
            self._send("advance_table", table_id, priority=PRIORITY["bots_only"], queue=self.bots_queue)
        else:
            self._send("advance_table", table_id, priority=PRIORITY["human"])

    def match(self, game: str, players: int) -> None:
        """Run matchmaking for one queue now rather than at the next beat."""
        self._send("match_queue", game, players)

    def close(self) -> None:
        self.app.close()
