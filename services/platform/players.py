"""Players: who is behind a request, kept apart from the name they show (issue 15).

A player is an id the server makes (`gw:{p:<id>}`), never a name anyone can type.
Without friction a browser becomes a *guest*: it makes a random device id once, keeps it,
and `guest(device)` gives that device's player (the same one every time) and a session.
A guest may *upgrade* to a username and password (hashed with Argon2id, passwords.py);
from then on the device id alone no longer signs in, the password does. The display name
is a free label on the player, shown at tables; ratings, seats and tickets hold the id.

Roles (architecture decision 11): every player, guest or account, is a `player`; an
account may also be a `designer` (sweeps, tunes, nights, /designer) or an `operator`
(/ops, /metrics, and everything a designer may). Only an operator's command line grants
them (`cultists admin`), never the API, so no request can raise its own rights.

Sessions are random tokens; only their SHA-256 is stored, with a time to live, so they
expire on their own, and `revoke` / `revoke_all` end them at once.

    gw:{p:<id>}               hash    name, kind (guest|account), username, password
                                      (argon2 hash), device (sha256), created, roles
                                      (space-separated, beyond `player`)
    gw:{p:<id>}:sessions      set     session token hashes (to revoke them all)
    gw:{d:<sha256>}           string  player id of a guest device
    gw:{u:<name>}             string  player id of an account (name lower-cased)
    gw:{u:<name>}:failures    hash    failed sign-ins (count, last), forgotten after a day
    gw:{s:<sha256>}           string  player id, expiring after session_ttl_seconds

Each key is its own hash tag (keys.py), so one Redis or a cluster holds them alike; a
change that writes two of them writes them in an order a crash cannot harm (a session
is listed on its player before it exists, so "sign out everywhere" always finds it).
"""

from __future__ import annotations

import re
import secrets
import time
import unicodedata
from dataclasses import dataclass
from typing import Any, cast

from zxcvbn import zxcvbn

from services.runtime.redis_types import RedisClient

from .errors import PlatformError
from .keys import device_key_of, failures_key, player_key, session_key_of, sessions_key, username_key
from .passwords import Hasher, LocalHasher
from .store import hash_token

PLAYER_ID = re.compile(r"^[0-9a-f]{16}$")
USERNAME = re.compile(r"^[A-Za-z0-9_.-]{3,32}$")
DEVICE_MIN, DEVICE_MAX = 16, 128
NAME_MAX = 32

# What a display name may hold, stated as one pattern that the OpenAPI document gives as is
# (so the document's rule is the API's, code point for code point): white space around it,
# which is trimmed, then at least one visible character, with spaces only between them.
# A visible character is any but a control (Cc), format (Cf: the bidi overrides and
# zero-width joiners a spoofed name is made of) or separator (Z*) one of the Basic
# Multilingual Plane, where every control, separator and bidi control is. Past it the few
# format characters (tags, hieroglyph and musical format controls) are let be, as are
# private-use and unassigned code points: a name is a label, never an identity, and a
# pattern that lists them is one no common dialect reads alike (ECMA-262 names no code
# point past the BMP in a class without its `u` flag) or hundreds of ranges long. A lone
# surrogate is no character at all: no JSON body carrying one parses (400 malformed).
_HIDDEN = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})


def _char(code: int) -> str:
    """A code point of the BMP as every dialect reads it in a class: `\\uXXXX`."""
    return f"\\u{code:04x}"


def _ranges(codes: list[int]) -> str:
    """Ascending code points as a character class's ranges."""
    out: list[str] = []
    start = previous = codes[0]
    for code in [*codes[1:], -1]:
        if code != previous + 1:
            out.append(_char(start) + (f"-{_char(previous)}" if previous > start else ""))
            start = code
        previous = code
    return "".join(out)


def _name_pattern() -> str:
    # (a hidden code point is not printable: printable ones are skipped unasked)
    hidden = [
        c
        for c in range(0x10000)
        if c == 0x20 or (not chr(c).isprintable() and unicodedata.category(chr(c)) in _HIDDEN)
    ]
    space = [c for c in range(0x3001) if chr(c).isspace()]  # what str.strip() trims
    visible = f"[^{_ranges(hidden)}]"
    return f"^[{_ranges(space)}]*{visible}(?:{visible}| )*[{_ranges(space)}]*$"


NAME_PATTERN = _name_pattern()
NAME = re.compile(NAME_PATTERN)
PASSWORD_MIN, PASSWORD_MAX = 10, 128
# zxcvbn's guessability score (0-4) a new password must reach: 3 is "safely unguessable
# against online attacks" in its words; common words, keyboard runs, repeats, dates and
# the account's own name score lower.
PASSWORD_SCORE = 3
# Failed sign-ins per account before each next try waits: 2 s after the fifth, doubling to
# at most 15 minutes; a day without failures forgets them. Counted by the name tried, so
# an unknown name is throttled alike (its answer would otherwise tell it apart).
FAILURES_FREE = 5
BACKOFF_FIRST, BACKOFF_MAX = 2.0, 900.0
FAILURES_TTL = 24 * 3600
SESSION_HEADER = "X-Player-Token"
# Each role includes the ones after it: an operator may do what a designer may.
ROLES = ("operator", "designer", "player")


def session_key(token: str) -> str:
    return session_key_of(hash_token(token))


@dataclass
class Player:
    id: str
    name: str
    kind: str  # guest | account
    username: str | None
    granted: tuple[str, ...] = ()  # roles beyond `player` (accounts only)

    @property
    def roles(self) -> list[str]:
        """Every role the player holds, the ones a granted role includes too."""
        ranks = [ROLES.index(r) for r in self.granted if r in ROLES]
        top = min(ranks, default=ROLES.index("player"))
        return list(ROLES[top:])

    def has(self, role: str) -> bool:
        return role in self.roles

    def public(self) -> dict[str, Any]:
        return {
            "player": self.id,
            "name": self.name,
            "kind": self.kind,
            "username": self.username,
            "roles": self.roles,
        }


def check_role(role: Any) -> str:
    if role not in ROLES:
        raise PlatformError(400, "malformed", f"a role is one of {', '.join(ROLES)}")
    return role


def display_name(value: Any, default: str) -> str:
    """A display name (NAME, NAME_PATTERN): trimmed of the white space around it;
    `default` when none is given."""
    if value is None:
        return default
    if not isinstance(value, str) or not 1 <= len(value) <= NAME_MAX or not NAME.fullmatch(value):
        raise PlatformError(
            400, "malformed", f"'name' is 1 to {NAME_MAX} characters, none a control, format or "
            "separator character (spaces only inside it)"
        )  # fmt: skip
    return value.strip()


def _check_credentials(username: Any, password: Any) -> None:
    """A username and a new password the policy takes: PASSWORD_MIN characters, and not
    guessable by zxcvbn's measure (common and breached passwords, words, keyboard runs,
    repeats, the username itself): 400 `weak_password` with its advice."""
    if not isinstance(username, str) or not USERNAME.match(username):
        raise PlatformError(400, "malformed", "'username' is 3 to 32 letters, digits, '_', '.' or '-'")
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise PlatformError(400, "malformed", f"'password' is {PASSWORD_MIN} to {PASSWORD_MAX} characters")
    found = zxcvbn(password, user_inputs=[username, "cultists", "cultist"])
    if found["score"] < PASSWORD_SCORE:
        feedback = found.get("feedback") or {}
        advice = " ".join([feedback.get("warning") or "", *feedback.get("suggestions", [])]).strip()
        raise PlatformError(
            400,
            "weak_password",
            "that password is too easy to guess"
            + (f": {advice}" if advice else "")
            + " (a few unrelated words make a strong one)",
            field="password",
        )


def backoff_seconds(failures: int) -> float:
    """How long the next sign-in of an account waits after `failures` failed ones."""
    if failures < FAILURES_FREE:
        return 0.0
    return min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (failures - FAILURES_FREE))


class PlayerBook:
    def __init__(
        self,
        client: RedisClient,
        session_ttl: int,
        hasher: Hasher | None = None,
        guest_ttl: int = 30 * 24 * 3600,
    ) -> None:
        self.redis = client
        self.session_ttl = session_ttl
        # A guest's player and device keys expire this long after its last sign-in (each
        # sign-in renews them); an account's player key never does.
        self.guest_ttl = guest_ttl
        # Does each Argon2 hash and verification: the gateway hands in its worker's hashing
        # process (services/gateway/hashing.py), so ~150 ms of hashing never stalls the
        # other requests of its event loop nor takes their cores; elsewhere they run where
        # they are called (passwords.LocalHasher).
        self.hasher: Hasher = hasher or LocalHasher()
        self._dummy: str | None = None

    def _hash(self, password: str) -> str:
        return self.hasher.hash(password)

    def _verify(self, digest: str, password: str) -> bool:
        return self.hasher.verify(digest, password)

    def _dummy_hash(self) -> str:
        """Verified against when the username is unknown, so both failures take the same
        time (made on first use, by the hasher: not at import, not on the event loop)."""
        if self._dummy is None:
            self._dummy = self._hash("not a password anyone has")
        return self._dummy

    # -- reading ---------------------------------------------------------------------------
    def get(self, player_id: str) -> Player | None:
        if not PLAYER_ID.match(player_id):
            return None
        raw = self.redis.hmget(player_key(player_id), "name", "kind", "username", "roles")
        if raw[1] is None:
            return None
        return Player(
            player_id,
            raw[0].decode(),
            raw[1].decode(),
            raw[2].decode() if raw[2] is not None else None,
            tuple(raw[3].decode().split()) if raw[3] is not None else (),
        )

    def by_username(self, username: str) -> Player | None:
        if not isinstance(username, str) or not USERNAME.match(username):
            return None
        found = self.redis.get(username_key(username))
        return self.get(found.decode()) if found is not None else None

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
        self.redis.set(device_key, candidate, nx=True, ex=self.guest_ttl)
        player_id = cast(bytes, self.redis.get(device_key)).decode()  # set just above (SET NX or before)
        player = self.get(player_id)
        if player is None:
            label = display_name(name, f"guest-{player_id[:4]}")
            record = {"name": label, "kind": "guest", "device": hash_token(device), "created": time.time()}
            with self.redis.pipeline(transaction=True) as pipe:  # one key: one slot
                pipe.hset(player_key(player_id), mapping=record)
                pipe.expire(player_key(player_id), self.guest_ttl)
                pipe.execute()
            player = Player(player_id, label, "guest", None)
        elif player.kind != "guest":
            raise PlatformError(
                409,
                "upgraded",
                "this device's player has a username now: sign in with it (POST /api/sessions)",
            )
        else:  # seen again: the guest lives another guest_ttl from now
            self.redis.expire(player_key(player_id), self.guest_ttl)
        self.redis.expire(device_key, self.guest_ttl)
        return self._session(player)

    def upgrade(self, player: Player, username: Any, password: Any) -> dict[str, Any]:
        """A guest takes a username and password; its id, name and ratings stay. Its
        sessions are ended and a new one given: a guest session that leaked (it is only a
        device's) does not become the account's."""
        if player.kind != "guest":
            raise PlatformError(409, "not_guest", "this player already has a username")
        _check_credentials(username, password)
        if not self.redis.set(username_key(username), player.id, nx=True):
            raise PlatformError(409, "username_taken", f"the username {username!r} is taken")
        digest = self._hash(password)
        with self.redis.pipeline(transaction=True) as pipe:  # an account never expires
            pipe.hset(
                player_key(player.id), mapping={"kind": "account", "username": username, "password": digest}
            )
            pipe.persist(player_key(player.id))
            pipe.execute()
        account = Player(player.id, player.name, "account", username, player.granted)
        self.revoke_all(account)
        return self._session(account)

    def change_password(self, player: Player, current: Any, new: Any) -> dict[str, Any]:
        """A new password for an account, given its current one (throttled like a sign-in);
        every session ends and a new one is given, so whoever held an old one is out."""
        if player.kind != "account" or player.username is None:
            raise PlatformError(409, "not_account", "a guest has no password yet: upgrade first")
        if not isinstance(current, str) or len(current) > PASSWORD_MAX:
            raise PlatformError(400, "malformed", "'password' (the current one) is required")
        self._check_throttle(player.username)
        stored = self.redis.hget(player_key(player.id), "password")
        if stored is None or not self._verify(stored.decode(), current):
            self._count_failure(player.username)
            raise PlatformError(401, "bad_credentials", "unknown username or wrong password")
        _check_credentials(player.username, new)
        self.redis.hset(player_key(player.id), "password", self._hash(new))
        self.redis.delete(failures_key(player.username))
        self.revoke_all(player)
        return self._session(player)

    def create_account(self, username: Any, password: Any, role: str = "player") -> Player:
        """A new account with a role, for the operator's command line (`cultists admin
        create-user`): how the first operator comes to be, before anyone can sign in."""
        check_role(role)
        _check_credentials(username, password)
        player_id = secrets.token_hex(8)
        granted = "" if role == "player" else role
        record = {
            "name": username,
            "kind": "account",
            "username": username,
            "password": self._hash(password),
            "created": time.time(),
            "roles": granted,
        }
        # The player first, then its name: a crash between leaves a player nobody names.
        self.redis.hset(player_key(player_id), mapping=record)
        if not self.redis.set(username_key(username), player_id, nx=True):
            self.redis.delete(player_key(player_id))
            raise PlatformError(409, "username_taken", f"the username {username!r} is taken")
        return Player(player_id, username, "account", username, (granted,) if granted else ())

    def grant(self, username: Any, role: Any) -> Player:
        """Give an account a role (one field of its own key: one slot). `player` takes every
        other role away again."""
        check_role(role)
        player = self.by_username(username) if isinstance(username, str) else None
        if player is None:
            raise PlatformError(404, "unknown_player", f"no account {username!r}")
        granted = "" if role == "player" else role
        self.redis.hset(player_key(player.id), "roles", granted)
        return Player(player.id, player.name, player.kind, player.username, (granted,) if granted else ())

    def login(self, username: Any, password: Any) -> dict[str, Any]:
        """A new session for an account; one answer for a wrong name or password.

        Throttled per name tried, whatever the address: after FAILURES_FREE failures each
        next try must wait `backoff_seconds` since the last one (429 `login_throttled` with
        Retry-After, the password not even checked), so guessing one account's password
        costs days, not minutes. A success forgets the failures."""
        if not isinstance(username, str) or not isinstance(password, str) or len(password) > PASSWORD_MAX:
            raise PlatformError(400, "malformed", "'username' and 'password' are required")
        known = USERNAME.match(username) is not None
        if known:
            self._check_throttle(username)
        found = self.redis.get(username_key(username)) if known else None
        stored = self.redis.hget(player_key(found.decode()), "password") if found is not None else None
        ok = (
            self._verify(stored.decode() if stored is not None else self._dummy_hash(), password)
            and stored is not None
        )
        if not ok or found is None:
            if known:
                self._count_failure(username)
            raise PlatformError(401, "bad_credentials", "unknown username or wrong password")
        self.redis.delete(failures_key(username))
        player = self.get(found.decode())
        assert player is not None
        return self._session(player)

    def _check_throttle(self, username: str) -> None:
        raw = self.redis.hmget(failures_key(username), "count", "last")
        count = int(raw[0]) if raw[0] is not None else 0
        wait = backoff_seconds(count)
        left = (float(raw[1]) + wait - time.time()) if raw[1] is not None else 0.0
        if wait and left > 0:
            raise PlatformError(
                429,
                "login_throttled",
                f"{count} failed sign-ins to this account: the next try waits {left:.0f} s more "
                "(each failure doubles the wait, up to 15 minutes)",
                retry_after=max(1, int(left + 0.999)),
            )

    def _count_failure(self, username: str) -> None:
        key = failures_key(username)  # one key, one slot: a transaction
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(key, "count", 1)
            pipe.hset(key, "last", repr(time.time()))
            pipe.expire(key, FAILURES_TTL)
            pipe.execute()

    # -- changing ------------------------------------------------------------------------------
    def rename(self, player: Player, name: Any) -> Player:
        label = display_name(name, player.name)
        self.redis.hset(player_key(player.id), "name", label)
        return Player(player.id, label, player.kind, player.username, player.granted)

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
