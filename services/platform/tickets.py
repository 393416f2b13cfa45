"""Matchmaking tickets in Redis, and turning the groups `matchmaking.group_tickets` forms
into tables.

Every key of one queue (one game and table size) shares the queue's hash tag (keys.py):
its zset of queued tickets, the tickets (game, players, player (display name), player_id,
rating, created, token (sha256), status (queued|matched|cancelled), table, seat,
matched_at, bots: seats of its table bots filled), its lock, the tables it formed but
has not yet written, and each ticket's sharded update channel (the ticket after each
change, which its stream follows). A ticket's id
names its queue (`<game>.<players>.<hex>`), so a ticket is found without a lookup.

A ticket's secret token becomes its seat token when it is matched, so the player holds one
secret and the gateway stores only its hash. A group is seated in one script in the
queue's slot (lua/seat_group.lua): a ticket cancelled meanwhile voids the group, nothing
is written, and the rest wait for the next pass; the formed table's plan is kept there
until the table is written in its own slot, so a crash in between is finished by the
next pass (`finish_forming`). One pass runs per queue at a time (a Redis lock), so two
workers never form two tables from the same tickets.
"""

from __future__ import annotations

import random
import re
import secrets
import time
from typing import Any

import orjson

from services.runtime.redis_types import RedisClient

from .dispatch import TaskQueue
from .engines import EngineClients
from .errors import PlatformError
from .keys import QUEUES, forming_key, held_key, queue_key, queue_lock_key, ticket_channel, ticket_key
from .matchmaking import Group, MatchPolicy, Ticket, group_tickets
from .metrics import observe_time_to_match
from .ratings import RatingBook
from .store import hash_token, lua_source
from .tables import TablePlan, TableService, default_bot

TICKET_TTL = 24 * 3600
TICKET_ID = re.compile(r"^(?P<game>[a-z][a-z0-9_]{0,39})\.(?P<players>[1-9][0-9]?)\.[0-9a-f]{24}$")


def _ticket_key(ticket_id: str) -> str | None:
    """The key of a ticket from its id (which names its queue); None for an id no ticket has."""
    found = TICKET_ID.match(ticket_id)
    return ticket_key(found["game"], int(found["players"]), ticket_id) if found else None


def ticket_channel_of(ticket_id: str) -> str | None:
    """Where a ticket's changes (matched, cancelled) are announced to its streams, in its
    queue's slot (sharded pub/sub); the payload is the ticket as `status` shows it."""
    found = TICKET_ID.match(ticket_id)
    return ticket_channel(found["game"], int(found["players"]), ticket_id) if found else None


class MatchmakingService:
    def __init__(
        self,
        client: RedisClient,
        engines: EngineClients,
        tables: TableService,
        ratings: RatingBook,
        tasks: TaskQueue,
        policy: MatchPolicy,
    ) -> None:
        self.redis = client
        self.engines = engines
        self.tables = tables
        self.ratings = ratings
        self.tasks = tasks
        self.policy = policy
        self._seat_group = client.register_script(lua_source("seat_group"))
        self._cancel = client.register_script(lua_source("cancel_ticket"))

    # -- tickets ---------------------------------------------------------------------------
    def enqueue(self, game: str, players: int | None, player_id: str, name: str) -> dict[str, Any]:
        """Queue a signed-in player (ratings and seats hold `player_id`; `name` is shown).
        One queued ticket per player: two would let one player fill two seats of a rated
        table, and lose (or win) on purpose against themselves."""
        desc = self.engines.describe(game)
        players = players or desc.default_players
        least = desc.variant_min_players or desc.min_players  # the engine words CC-2's refusal
        if not least <= players <= desc.max_players:
            raise PlatformError(
                400, "invalid_players", f"{desc.title} takes {least}-{desc.max_players} players"
            )
        # Matchmaking starts its tables with the default rules: a table size they refuse
        # (Crazy Cultists' 2 players, a sweep variant: CC-2) is refused now, in the engine's
        # words, rather than when a match is found.
        self.engines.new_game(game, {}, players, 0)
        ticket_id = f"{game}.{players}.{secrets.token_hex(12)}"
        token = secrets.token_urlsafe(32)
        held = held_key(player_id)
        if not self.redis.set(held, ticket_id, nx=True, ex=TICKET_TTL):
            other = self.redis.get(held)
            key = _ticket_key(other.decode()) if other else None
            status = self.redis.hget(key, "status") if key else None
            if other and status == b"queued":  # (a status was read only for another ticket)
                raise PlatformError(
                    409, "already_queued", f"you already wait with ticket {other.decode()}; cancel it first"
                )
            self.redis.set(held, ticket_id, ex=TICKET_TTL)  # that ticket was matched or cancelled
        mu, sigma = self.ratings.get(game, player_id)
        now = time.time()
        record = {
            "game": game, "players": players, "player": name, "player_id": player_id, "rating": mu,
            "sigma": sigma, "created": now, "token": hash_token(token), "status": "queued",
        }  # fmt: skip
        key = ticket_key(game, players, ticket_id)
        with self.redis.pipeline(transaction=True) as pipe:  # one slot: the queue's
            pipe.hset(key, mapping=record)
            pipe.expire(key, TICKET_TTL)
            pipe.zadd(queue_key(game, players), {ticket_id: now})
            pipe.execute()
        self.redis.sadd(QUEUES, f"{game}:{players}")
        self.tasks.match(game, players)
        return {**self._public(ticket_id, record, now), "token": token}

    def _load(self, ticket_id: str, token: str | None, player_id: str | None) -> dict[str, str]:
        """The ticket, for its token held by its own player (both are needed)."""
        key = _ticket_key(ticket_id)
        raw = self.redis.hgetall(key) if key else {}
        if not raw:
            raise PlatformError(404, "unknown_ticket", f"no ticket {ticket_id!r}")
        ticket = {k.decode(): v.decode() for k, v in raw.items()}
        if token is None:
            raise PlatformError(
                401, "token_required", "this needs the ticket's token (Authorization: Bearer ...)"
            )
        if not secrets.compare_digest(ticket["token"], hash_token(token)):
            raise PlatformError(403, "wrong_token", "that token is not this ticket's")
        owner = ticket.get("player_id")
        if owner and player_id != owner:
            if player_id is None:
                raise PlatformError(
                    401, "sign_in_required", "a ticket is bound to its player: send their session too"
                )
            raise PlatformError(403, "other_player", "that ticket belongs to another player")
        return ticket

    @staticmethod
    def _public(ticket_id: str, ticket: dict[str, Any], now: float) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ticket": ticket_id,
            "game": ticket["game"],
            "players": int(ticket["players"]),
            "player": ticket["player"],
            "player_id": ticket.get("player_id"),
            "rating": float(ticket["rating"]),
            "status": ticket["status"],
            "waited": round(float(ticket.get("matched_at") or now) - float(ticket["created"]), 3),
            "table": None,
            "seat": None,
        }
        if ticket["status"] == "matched":
            out["table"], out["seat"] = ticket["table"], int(ticket["seat"])
            out["bots"] = int(ticket.get("bots") or 0)
        return out

    def status(self, ticket_id: str, token: str | None, player_id: str | None = None) -> dict[str, Any]:
        ticket = self._load(ticket_id, token, player_id)
        self._written(ticket)
        return self._public(ticket_id, ticket, time.time())

    def _written(self, ticket: dict[str, str]) -> None:
        """A matched ticket names a table that exists: a pass marks its tickets matched and
        writes the table just after, so a reader in between writes it (once, whoever is
        first), rather than hand out a table id that answers 404 for a moment."""
        if ticket["status"] != "matched":
            return
        game, players = ticket["game"], int(ticket["players"])
        raw = self.redis.hget(forming_key(game, players), ticket["table"])
        if raw is not None:
            self._write_formed(game, players, TablePlan.from_json(raw))

    def authorise(self, ticket_id: str, token: str | None, player_id: str | None = None) -> str:
        """The ticket's token hash, after the same checks as `status` (for a stream ticket,
        which then checks the token has not changed)."""
        return self._load(ticket_id, token, player_id)["token"]

    def token_hash(self, ticket_id: str) -> str | None:
        """The ticket's token hash as stored (a stream ticket checks it has not changed)."""
        key = _ticket_key(ticket_id)
        raw = self.redis.hget(key, "token") if key else None
        return raw.decode() if raw is not None else None

    def current(self, ticket_id: str) -> dict[str, Any] | None:
        """The ticket as `status` shows it, without checking who asks (a stream already
        did); None once it expired."""
        key = _ticket_key(ticket_id)
        raw = self.redis.hgetall(key) if key else {}
        if not raw:
            return None
        ticket = {k.decode(): v.decode() for k, v in raw.items()}
        self._written(ticket)
        return self._public(ticket_id, ticket, time.time())

    def _announce(self, ticket_id: str) -> None:
        """Tell the ticket's streams it changed (after the change is written)."""
        found = self.current(ticket_id)
        channel = ticket_channel_of(ticket_id)
        if found is not None and channel is not None:
            self.redis.spublish(channel, orjson.dumps(found))

    def cancel(self, ticket_id: str, token: str | None, player_id: str | None = None) -> dict[str, Any]:
        ticket = self._load(ticket_id, token, player_id)
        game, players = ticket["game"], int(ticket["players"])
        outcome = self._cancel(
            keys=[ticket_key(game, players, ticket_id), queue_key(game, players)], args=[ticket_id]
        )
        if outcome != b"ok":
            raise PlatformError(409, "not_queued", f"the ticket is {outcome.decode() or 'gone'}")
        if ticket.get("player_id"):
            self.redis.delete(held_key(ticket["player_id"]))
        self._announce(ticket_id)
        return self._public(ticket_id, {**ticket, "status": "cancelled"}, time.time())

    # -- forming tables ----------------------------------------------------------------------
    def queues(self) -> list[tuple[str, int]]:
        out = []
        for member in self.redis.smembers(QUEUES):
            game, _, players = member.decode().partition(":")
            out.append((game, int(players)))
        return sorted(out)

    def match(self, game: str, players: int, now: float | None = None) -> list[str]:
        """One matchmaking pass over a queue; returns the tables it opened."""
        lock = self.redis.lock(queue_lock_key(game, players), timeout=60, blocking=False)
        if not lock.acquire():
            return []
        try:
            now = time.time() if now is None else now
            queued = self._queued(game, players)
            opened = []
            for group in group_tickets(list(queued.values()), now, players, self.policy):
                table = self._seat(game, players, group, queued)
                if table is not None:
                    opened.append(table)
            return opened
        finally:
            lock.release()

    def _queued(self, game: str, players: int) -> dict[str, Ticket]:
        ids = [m.decode() for m in self.redis.zrange(queue_key(game, players), 0, -1)]
        with self.redis.pipeline(transaction=False) as pipe:
            for ticket_id in ids:
                pipe.hmget(ticket_key(game, players, ticket_id), ["rating", "created"])
            rows = pipe.execute()
        return {
            i: Ticket(i, float(rating), float(created))
            for i, (rating, created) in zip(ids, rows, strict=True)
            if rating is not None
        }

    def _seat(self, game: str, players: int, group: Group, queued: dict[str, Ticket]) -> str | None:
        seed = secrets.randbits(63)
        order: list[str | None] = [*group.tickets, *([None] * group.bots)]
        random.Random(seed).shuffle(order)  # no ticket always gets the first seat
        bot = default_bot(list(self.engines.describe(game).bots))
        keys = {t: ticket_key(game, players, t) for t in group.tickets}
        claims: dict[int, tuple[str, str | None, str | None]] = {}
        seats_of: dict[str, int] = {}
        owners: list[str] = []
        for seat, ticket_id in enumerate(order):
            if ticket_id is not None:
                token, player, owner = self.redis.hmget(keys[ticket_id], "token", "player", "player_id")
                if token is None:
                    return None
                claims[seat] = (token.decode(), player.decode(), owner.decode() if owner else None)
                seats_of[ticket_id] = seat
                if owner:
                    owners.append(owner.decode())
        if len(set(owners)) < len(owners):
            return None  # one player in two seats of a rated table: never (enqueue refuses it too)
        plan = self.tables.plan_table(
            game, players, {}, [None if t else bot for t in order], self.tables.settings.decision_seconds,
            seed=seed, claims=claims, rated=True, source="matchmaking",
        )  # fmt: skip
        now = time.time()
        args: list[Any] = [plan.table_id, plan.to_json(), now, group.bots]
        for ticket_id in group.tickets:
            args += [ticket_id, seats_of[ticket_id]]
        seated = self._seat_group(
            keys=[queue_key(game, players), forming_key(game, players), *(keys[t] for t in group.tickets)],
            args=args,
        )
        if not seated:
            return None
        self._write_formed(game, players, plan)
        for ticket_id in group.tickets:
            self._announce(ticket_id)
        with self.redis.pipeline(transaction=False) as pipe:
            for owner in owners:
                pipe.delete(held_key(owner))
            for ticket_id in group.tickets:
                observe_time_to_match(pipe, now - queued[ticket_id].enqueued_at)
            pipe.execute()
        return plan.table_id

    def _write_formed(self, game: str, players: int, plan: TablePlan) -> None:
        """Write a formed table (once, whoever gets there first), then forget its plan."""
        self.tables.write_table(plan)
        self.redis.hdel(forming_key(game, players), plan.table_id)

    def finish_forming(self) -> int:
        """Write the tables a matching pass formed but died before writing (beat); how many."""
        done = 0
        for game, players in self.queues():
            for raw in self.redis.hvals(forming_key(game, players)):
                self._write_formed(game, players, TablePlan.from_json(raw))
                done += 1
        return done
