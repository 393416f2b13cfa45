"""Queueing table work on Celery's `tables` queue, by task name.

The gateway never imports the task code: it sends `workers.tables.*` by name to the broker
it shares with the workers. Queueing is a hint, never a duty the request can fail on: a bot
seat also has a short deadline in Redis, so a task lost here (broker hiccup, process killed
right after the commit) is picked up by the beat's deadline sweep a moment later.
"""

from __future__ import annotations

import logging

from celery import Celery

log = logging.getLogger("cultists.gateway.dispatch")

QUEUE = "tables"


class TaskQueue:
    def __init__(self, redis_url: str, queue: str = QUEUE) -> None:
        self.queue = queue
        self.app = Celery("cultists-gateway", broker=redis_url, set_as_current=False)
        self.app.conf.broker_connection_retry_on_startup = True

    def _send(self, name: str, *args: object) -> None:
        try:
            self.app.send_task(f"workers.tables.{name}", args=list(args), queue=self.queue)
        except Exception:  # the deadline sweep covers for it
            log.exception("could not queue %s%r", name, args)

    def advance(self, table_id: str) -> None:
        """Let the bots whose turn it is at this table move."""
        self._send("advance_table", table_id)

    def match(self, game: str, players: int) -> None:
        """Run matchmaking for one queue now rather than at the next beat."""
        self._send("match_queue", game, players)

    def close(self) -> None:
        self.app.close()
