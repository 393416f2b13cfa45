"""A short chat per table (issue 31): the seated players talk, everyone at the table reads.

Bounded everywhere: a message is at most `MAX_CHARS` characters of plain text (control
characters dropped; pages insert it as text, never as markup), a seat sends at most `RATE`
messages per `WINDOW_SECONDS`, the table keeps its newest `KEEP` messages, and the chat's
keys expire a day after the last message. Every key shares the table's hash tag, so one
table's chat lives in one Cluster slot.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

import orjson

from services.runtime.redis_types import RedisClient

from .errors import PlatformError
from .keys import chat_count_key, chat_key, chat_rate_key

MAX_CHARS = 200
KEEP = 50
RATE = 5
WINDOW_SECONDS = 10
EXPIRE_SECONDS = 24 * 3600
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass
class TableChat:
    redis: RedisClient

    def say(self, table_id: str, seat: int, name: str, text: str) -> dict[str, Any]:
        """Post `text` as `seat` (already known to hold it); 429 over the seat's rate."""
        words = _CONTROL.sub(" ", text).strip()
        if not words:
            raise PlatformError(400, "malformed", "a chat message needs some text", field="text")
        rate = chat_rate_key(table_id, seat)
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.incr(rate)
            pipe.expire(rate, WINDOW_SECONDS, nx=True)
            pipe.ttl(rate)
            used, _, ttl = pipe.execute()
        if int(used) > RATE:
            raise PlatformError(
                429, "chat_limited", f"at most {RATE} messages every {WINDOW_SECONDS} s; wait a moment",
                retry_after=max(1, int(ttl)),
            )  # fmt: skip
        message = {"id": int(self.redis.incr(chat_count_key(table_id))), "seat": seat, "name": name,
                   "text": words[:MAX_CHARS], "at": time.time()}  # fmt: skip
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.rpush(chat_key(table_id), orjson.dumps(message))
            pipe.ltrim(chat_key(table_id), -KEEP, -1)
            pipe.expire(chat_key(table_id), EXPIRE_SECONDS)
            pipe.expire(chat_count_key(table_id), EXPIRE_SECONDS)
            pipe.execute()
        return message

    def read(self, table_id: str, after: int = 0) -> list[dict[str, Any]]:
        """The kept messages with an id above `after`, oldest first."""
        found = [orjson.loads(m) for m in self.redis.lrange(chat_key(table_id), 0, -1)]
        return sorted((m for m in found if m["id"] > after), key=lambda m: m["id"])
