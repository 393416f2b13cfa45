"""Stream tickets: a short-lived, single-use pass to open one event stream.

A browser's `EventSource` cannot send headers, and a seat's token in a URL would sit in
logs and history for as long as the seat lasts. So a client that holds the token asks for
a ticket (`POST .../stream-ticket`, with the token and, for a bound seat, the player's
session) and opens the stream with `?ticket=`: the ticket is good once (GETDEL), for
`stream_ticket_seconds`, for the one stream it was issued for. A reconnecting EventSource
needs a fresh ticket (and loses nothing: a stream's first event is the state now).

One Redis key per ticket, hash-tagged by the ticket itself (`gw:{st:<sha256>}`): one slot
of a Redis Cluster, and only its hash is stored, as for every token.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson

from services.runtime.redis_types import RedisClient

from .store import hash_token


def ticket_key(ticket: str) -> str:
    return f"gw:{{st:{hash_token(ticket)}}}"


class StreamTickets:
    def __init__(self, client: RedisClient, ttl_seconds: int) -> None:
        self.redis = client
        self.ttl_seconds = ttl_seconds

    def issue(self, subject: dict[str, Any]) -> tuple[str, float]:
        """A new ticket for `subject` (what it opens: a seat's stream or a matchmaking
        ticket's), and when it expires (unix seconds)."""
        ticket = secrets.token_urlsafe(24)
        self.redis.set(ticket_key(ticket), orjson.dumps(subject), ex=self.ttl_seconds)
        return ticket, time.time() + self.ttl_seconds

    def redeem(self, ticket: str) -> dict[str, Any] | None:
        """The ticket's subject, once: a second redeem (or an expired ticket) is None."""
        if not ticket or len(ticket) > 64:
            return None
        raw = self.redis.getdel(ticket_key(ticket))
        return orjson.loads(raw) if raw is not None else None
