"""Players: who is behind a request, kept apart from the name they show (issue 15).

A player is an id the server makes (`gw:{p:<id>}`), never a name anyone can type.
Without friction a browser becomes a *guest*: it makes a random device id once, keeps it,
and `guest(device)` gives that device's player (the same one every time) and a session.
A guest may *upgrade* to a username and password (hashed with Argon2id, argon2-cffi);
from then on the device id alone no longer signs in, the password does. The display name
is a free label on the player, shown at tables; ratings, seats and tickets hold the id.

Sessions are random tokens; only their SHA-256 is stored, with a time to live, so they
expire on their own, and `revoke` / `revoke_all` end them at once.

    gw:{p:<id>}               hash    name, kind (guest|account), username, password
                                      (argon2 hash), device (sha256), created
    gw:{p:<id>}:sessions      set     session token hashes (to revoke them all)
    gw:{d:<sha256>}           string  player id of a guest device
    gw:{u:<name>}             string  player id of an account (name lower-cased)
    gw:{s:<sha256>}           string  player id, expiring after session_ttl_seconds

Each key is its own hash tag (keys.py), so one Redis or a cluster holds them alike; a
change that writes two of them writes them in an order a crash cannot harm (a session
is listed on its player before it exists, so "sign out everywhere" always finds it).
"""

from __future__ import annotations

import functools
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from .errors import PlatformError
from .keys import device_key_of, player_key, session_key_of, sessions_key, username_key
from .store import hash_token

PLAYER_ID = re.compile(r"^[0-9a-f]{16}$")
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,32}$")
DEVICE_MIN, DEVICE_MAX = 16, 128
NAME_MAX = 32
PASSWORD_MIN, PASSWORD_MAX = 8, 128
SESSION_HEADER = "X-Player-Token"

_HASHER = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the username is unknown, so both failures take the same time
    (made on first use: hashing costs tens of milliseconds, not to be paid at import)."""
    return _HASHER.hash("not a password anyone has")


def session_key(token: str) -> str:
    return session_key_of(hash_token(token))


@dataclass
class Player:
    id: str
    name: str
    kind: str  # guest | account
    username: str | None

    def public(self) -> dict[str, Any]:
        return {"player": self.id, "name": self.name, "kind": self.kind, "username": self.username}


def display_name(value: Any, default: str) -> str:
    """A display name: 1-32 printable characters, trimmed; `default` when none is given."""
    if value is None:
        return default
    if not isinstance(value, str) or not value.strip() or len(value.strip()) > NAME_MAX:
        raise PlatformError(400, "malformed", f"'name' is 1 to {NAME_MAX} characters")
    name = value.strip()
    if not name.isprintable():
        raise PlatformError(400, "malformed", "'name' holds only printable characters")
    return name


class PlayerBook:
    def __init__(self, client: redis.Redis, session_ttl: int) -> None:
        self.redis = client
        self.session_ttl = session_ttl

    # -- reading ---------------------------------------------------------------------------
    def get(self, player_id: str) -> Player | None:
        if not PLAYER_ID.match(player_id):
            return None
        raw = self.redis.hmget(player_key(player_id), "name", "kind", "username")
        if raw[1] is None:
            return None
        return Player(
            player_id, raw[0].decode(), raw[1].decode(), raw[2].decode() if raw[2] is not None else None
        )

    def by_session(self, token: str) -> Player | None:
        """The player a live session token names; None when it expired, was revoked or
        never was."""
        raw = self.redis.get(session_key(token))
        return self.get(raw.decode()) if raw is not None else None

    # -- signing in --------------------------------------------------------------------------
    def _session(self, player: Player) -> dict[str, Any]:
        token = secrets.token_urlsafe(32)
        digest = hash_token(token)
        with self.redis.pipeline(transaction=False) as pipe:  # listed first, then made
            pipe.sadd(sessions_key(player.id), digest)
            pipe.expire(sessions_key(player.id), self.session_ttl)
            pipe.set(session_key_of(digest), player.id, ex=self.session_ttl)
            pipe.execute()
        return {**player.public(), "token": token, "expires": time.time() + self.session_ttl}

    def guest(self, device: Any, name: Any) -> dict[str, Any]:
        """The device's guest player (made on first sight) and a new session for it."""
        if not isinstance(device, str) or not DEVICE_MIN <= len(device) <= DEVICE_MAX:
            raise PlatformError(
                400, "malformed", f"'device' is a random string of {DEVICE_MIN} to {DEVICE_MAX} characters"
            )
        device_key = device_key_of(hash_token(device))
        candidate = secrets.token_hex(8)
        # SET NX: two first requests from one device make one player.
        self.redis.set(device_key, candidate, nx=True)
        player_id = self.redis.get(device_key).decode()
        player = self.get(player_id)
        if player is None:
            label = display_name(name, f"guest-{player_id[:4]}")
            record = {"name": label, "kind": "guest", "device": hash_token(device), "created": time.time()}
            self.redis.hset(player_key(player_id), mapping=record)
            player = Player(player_id, label, "guest", None)
        elif player.kind != "guest":
            raise PlatformError(
                409,
                "upgraded",
                "this device's player has a username now: sign in with it (POST /api/sessions)",
            )
        return self._session(player)

    def upgrade(self, player: Player, username: Any, password: Any) -> Player:
        """A guest takes a username and password; its id, name and ratings stay."""
        if player.kind != "guest":
            raise PlatformError(409, "not_guest", "this player already has a username")
        if not isinstance(username, str) or not USERNAME.match(username):
            raise PlatformError(400, "malformed", "'username' is 3 to 32 letters, digits, '_', '.' or '-'")
        if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
            raise PlatformError(
                400, "malformed", f"'password' is {PASSWORD_MIN} to {PASSWORD_MAX} characters"
            )
        if not self.redis.set(username_key(username), player.id, nx=True):
            raise PlatformError(409, "username_taken", f"the username {username!r} is taken")
        digest = _HASHER.hash(password)
        self.redis.hset(
            player_key(player.id), mapping={"kind": "account", "username": username, "password": digest}
        )
        return Player(player.id, player.name, "account", username)

    def login(self, username: Any, password: Any) -> dict[str, Any]:
        """A new session for an account; one answer for a wrong name or password."""
        if not isinstance(username, str) or not isinstance(password, str) or len(password) > PASSWORD_MAX:
            raise PlatformError(400, "malformed", "'username' and 'password' are required")
        found = self.redis.get(username_key(username)) if USERNAME.match(username) else None
        stored = self.redis.hget(player_key(found.decode()), "password") if found is not None else None
        try:
            _HASHER.verify(stored.decode() if stored is not None else _dummy_hash(), password)
            ok = stored is not None
        except (VerificationError, InvalidHashError):
            ok = False
        if not ok or found is None:
            raise PlatformError(401, "bad_credentials", "unknown username or wrong password")
        player = self.get(found.decode())
        assert player is not None
        return self._session(player)

    # -- changing ------------------------------------------------------------------------------
    def rename(self, player: Player, name: Any) -> Player:
        label = display_name(name, player.name)
        self.redis.hset(player_key(player.id), "name", label)
        return Player(player.id, label, player.kind, player.username)

    def revoke(self, token: str) -> None:
        digest = hash_token(token)
        player_id = self.redis.get(session_key_of(digest))
        with self.redis.pipeline(transaction=False) as pipe:
            pipe.delete(session_key_of(digest))
            if player_id is not None:
                pipe.srem(sessions_key(player_id.decode()), digest)
            pipe.execute()

    def revoke_all(self, player: Player) -> int:
        digests = [d.decode() for d in self.redis.smembers(sessions_key(player.id))]
        with self.redis.pipeline(transaction=False) as pipe:
            for digest in digests:
                pipe.delete(session_key_of(digest))
            pipe.delete(sessions_key(player.id))
            pipe.execute()
        return len(digests)
