"""Matchmaking tickets in Redis, and turning the groups `matchmaking.group_tickets` forms
into tables.

    gw:ticket:{id}           hash  game, players, player (display name), player_id, rating,
                                   created, token (sha256),
                                   status (queued|matched|cancelled), table, seat, matched_at,
                                   bots (seats of its table bots filled)
    gw:ticket:{id}:updates   pubsub the ticket after each change (its stream follows it)
    gw:mm:{game}:{players}   zset  queued ticket ids by time queued
    gw:mm:queues             set   "game:players" of every queue that ever held a ticket
    gw:mm:held:{player}      string the player's one queued ticket (expires with it)

A ticket's secret token becomes its seat token when it is matched, so the player holds one
secret and the gateway stores only its hash. A group is seated in one transaction that
WATCHes its tickets: a ticket cancelled meanwhile voids the group, nothing is written, and
the rest wait for the next pass. One pass runs per queue at a time (a Redis lock), so two
workers never form two tables from the same tickets.
"""

from __future__ import annotations

import random
import secrets
import time
from typing import Any

import orjson
import redis

from .dispatch import TaskQueue
from .engines import EngineClients
from .errors import PlatformError
from .keys import QUEUES, queue_key
from .matchmaking import Group, MatchPolicy, Ticket, group_tickets
from .metrics import observe_time_to_match
from .ratings import RatingBook
from .store import hash_token
from .tables import TableService, default_bot, new_table_id

TICKET_TTL = 24 * 3600
TICKET_ID_LENGTH = 24


def ticket_key(ticket_id: str) -> str:
    return f"gw:ticket:{ticket_id}"


def ticket_channel(ticket_id: str) -> str:
    """Where a ticket's changes (matched, cancelled) are announced to its streams; the
    payload is the ticket as `status` shows it."""
    return f"gw:ticket:{ticket_id}:updates"


def held_key(player_id: str) -> str:
    """The one ticket a player may have queued at a time."""
    return f"gw:mm:held:{player_id}"


class MatchmakingService:
    def __init__(
        self,
        client: redis.Redis,
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
        ticket_id = secrets.token_hex(TICKET_ID_LENGTH // 2)
        token = secrets.token_urlsafe(32)
        held = held_key(player_id)
        if not self.redis.set(held, ticket_id, nx=True, ex=TICKET_TTL):
            other = self.redis.get(held)
            status = self.redis.hget(ticket_key(other.decode()), "status") if other else None
            if status == b"queued":
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
        with self.redis.pipeline() as pipe:
            pipe.hset(ticket_key(ticket_id), mapping=record)
            pipe.expire(ticket_key(ticket_id), TICKET_TTL)
            pipe.zadd(queue_key(game, players), {ticket_id: now})
            pipe.sadd(QUEUES, f"{game}:{players}")
            pipe.execute()
        self.tasks.match(game, players)
        return {**self._public(ticket_id, record, now), "token": token}

    def _load(self, ticket_id: str, token: str | None, player_id: str | None) -> dict[str, str]:
        """The ticket, for its token held by its own player (both are needed)."""
        raw = self.redis.hgetall(ticket_key(ticket_id)) if len(ticket_id) == TICKET_ID_LENGTH else {}
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
        return self._public(ticket_id, self._load(ticket_id, token, player_id), time.time())

    def authorise(self, ticket_id: str, token: str | None, player_id: str | None = None) -> str:
        """The ticket's token hash, after the same checks as `status` (for a stream ticket,
        which then checks the token has not changed)."""
        return self._load(ticket_id, token, player_id)["token"]

    def current(self, ticket_id: str) -> dict[str, Any] | None:
        """The ticket as `status` shows it, without checking who asks (a stream already
        did); None once it expired."""
        raw = self.redis.hgetall(ticket_key(ticket_id)) if len(ticket_id) == TICKET_ID_LENGTH else {}
        if not raw:
            return None
        return self._public(ticket_id, {k.decode(): v.decode() for k, v in raw.items()}, time.time())

    def _announce(self, ticket_id: str) -> None:
        """Tell the ticket's streams it changed (after the change is written)."""
        found = self.current(ticket_id)
        if found is not None:
            self.redis.publish(ticket_channel(ticket_id), orjson.dumps(found))

    def cancel(self, ticket_id: str, token: str | None, player_id: str | None = None) -> dict[str, Any]:
        ticket = self._load(ticket_id, token, player_id)
        key = ticket_key(ticket_id)
        with self.redis.pipeline() as pipe:
            while True:
                try:
                    pipe.watch(key)
                    current = pipe.hget(key, "status")
                    if current != b"queued":
                        pipe.reset()
                        raise PlatformError(
                            409, "not_queued", f"the ticket is {current.decode() if current else 'gone'}"
                        )
                    pipe.multi()
                    pipe.hset(key, "status", "cancelled")
                    pipe.zrem(queue_key(ticket["game"], int(ticket["players"])), ticket_id)
                    if ticket.get("player_id"):
                        pipe.delete(held_key(ticket["player_id"]))
                    pipe.execute()
                    break
                except redis.WatchError:
                    continue
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
        lock = self.redis.lock(f"gw:mm:lock:{game}:{players}", timeout=60, blocking=False)
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
                pipe.hmget(ticket_key(ticket_id), "rating", "created")
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
        table_id = new_table_id()
        keys = {t: ticket_key(t) for t in group.tickets}
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

        def still_queued(pipe: redis.client.Pipeline) -> bool:
            return all(pipe.hget(k, "status") == b"queued" for k in keys.values())

        def mark_matched(pipe: redis.client.Pipeline) -> None:
            now = time.time()
            pipe.zrem(queue_key(game, players), *group.tickets)
            for ticket_id, seat in seats_of.items():
                pipe.hset(
                    keys[ticket_id],
                    mapping={
                        "status": "matched", "table": table_id, "seat": seat, "matched_at": now,
                        "bots": group.bots,
                    },
                )  # fmt: skip
                observe_time_to_match(pipe, now - queued[ticket_id].enqueued_at)
            for owner in owners:
                pipe.delete(held_key(owner))

        table = self.tables.open_table(
            game, players, {}, [None if t else bot for t in order], self.tables.settings.decision_seconds,
            seed=seed, claims=claims, rated=True, source="matchmaking",
            table_id=table_id, watch=list(keys.values()), check=still_queued, also=mark_matched,
        )  # fmt: skip
        if table is None:
            return None
        for ticket_id in group.tickets:
            self._announce(ticket_id)
        return table.id
