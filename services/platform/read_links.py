"""Signed read links: how a designer's browser opens a report it may read.

Sessions travel in a header a page's script sets (`X-Player-Token`), never a cookie, so a
link the browser follows by itself (a sweep's report, a tune's report and its plots)
carries no session. The designer-only list of sweeps and tunes therefore hands out links
signed for one path prefix (`/api/tunes/<id>/`) that stay good for `seconds`: an HMAC of
the prefix and the expiry under a random key kept in Redis (made once with SET NX, so
every gateway process signs and checks alike). A link names one sweep or tune and
expires, so a link that leaks (history, a screenshot) opens that one report for minutes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from services.runtime.redis_types import RedisClient

from .keys import READ_LINK_SECRET

PARAM = "read"


class ReadLinks:
    def __init__(self, client: RedisClient, seconds: int = 900) -> None:
        self.redis = client
        self.seconds = seconds
        self._key: bytes | None = None

    def _secret(self) -> bytes:
        if self._key is None:
            self.redis.set(READ_LINK_SECRET, secrets.token_hex(32), nx=True)
            self._key = self.redis.get(READ_LINK_SECRET)
            assert self._key is not None
        return self._key

    def _mac(self, prefix: str, expires: int) -> str:
        return hmac.new(self._secret(), f"{prefix}|{expires}".encode(), hashlib.sha256).hexdigest()[:32]

    def sign(self, prefix: str) -> str:
        """The query value (`?read=`) opening paths under `prefix` for `seconds`."""
        expires = int(time.time()) + self.seconds
        return f"{expires}.{self._mac(prefix, expires)}"

    def valid(self, prefix: str, value: str | None) -> bool:
        if not value or "." not in value:
            return False
        raw_expires, mac = value.split(".", 1)
        if not raw_expires.isdigit() or int(raw_expires) < time.time():
            return False
        return hmac.compare_digest(mac, self._mac(prefix, int(raw_expires)))
