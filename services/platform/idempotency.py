"""Answers kept for retries: an `Idempotency-Key` names one write, its first answer is
kept, and a retry with the same key gets that answer back instead of a second effect.

One Redis key per record, its hash tag the record itself (`gw:{idem:<digest>}`), so it
lives on one slot of a Redis Cluster and no command here spans two entities. The digest
covers who sent the write (their credentials, else their address), the method, the path
and the client's key, so two clients can never read each other's answers even with the
same key. The value is one string: a JSON line of metadata (the body's fingerprint and,
once answered, the status and headers), then the body's bytes exactly as first sent.

A first attempt writes a `pending` record (SET NX, short-lived) before it runs, so a retry
arriving while it still runs is told so (409, retry shortly) rather than running it twice;
when the attempt ends the record becomes its answer for `window` seconds. An attempt that
failed on the server's side (5xx: nothing was written, the error says so) drops its
record, so its retry runs afresh. A process killed between its write and keeping the
answer leaves the pending record to expire: its retry then runs again and meets the
operation's own guard (a move's version check answers 409 `stale_version`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

import orjson

from services.runtime.redis_types import RedisClient


def record_key(digest: str) -> str:
    return f"gw:{{idem:{digest}}}"


def digest(scope: str, method: str, path: str, key: str) -> str:
    return hashlib.sha256("\x00".join((scope, method, path, key)).encode()).hexdigest()


def fingerprint(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@dataclass(frozen=True)
class Kept:
    """A first answer, as it was sent."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass(frozen=True)
class Begun:
    """What `begin` found: `run` (this attempt is the first: go on), `kept` (the answer to
    replay), `running` (the first attempt has not answered yet) or `mismatch` (the key was
    used for a different body)."""

    outcome: Literal["run", "kept", "running", "mismatch"]
    kept: Kept | None = None


class IdempotencyStore:
    def __init__(self, client: RedisClient, window_seconds: int, pending_seconds: int) -> None:
        self.redis = client
        self.window_seconds = window_seconds
        self.pending_seconds = pending_seconds

    def begin(self, record: str, body_fingerprint: str) -> Begun:
        key = record_key(record)
        pending = orjson.dumps({"fp": body_fingerprint, "pending": True})
        for _attempt in range(3):  # a record can expire between the SET and the GET
            if self.redis.set(key, pending, nx=True, ex=self.pending_seconds):
                return Begun("run")
            raw = self.redis.get(key)
            if raw is None:
                continue
            meta_line, _, body = raw.partition(b"\n")
            meta = orjson.loads(meta_line)
            if meta["fp"] != body_fingerprint:
                return Begun("mismatch")
            if meta.get("pending"):
                return Begun("running")
            headers = [(str(k), str(v)) for k, v in meta["headers"]]
            return Begun("kept", Kept(int(meta["status"]), headers, body))
        return Begun("running")

    def keep(self, record: str, body_fingerprint: str, answer: Kept) -> None:
        meta = {"fp": body_fingerprint, "status": answer.status, "headers": answer.headers}
        self.redis.set(record_key(record), orjson.dumps(meta) + b"\n" + answer.body, ex=self.window_seconds)

    def drop(self, record: str) -> None:
        self.redis.delete(record_key(record))
