"""The live-play platform's parts, built once per process from a Settings object.

The Flask app keeps one in `app.extensions`; a Celery table worker builds its own from the
environment. Both then run the very same services against the same Redis and engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from services.runtime.redis_client import connect, drop_idle_connections, is_cluster
from services.runtime.redis_types import RedisClient
from services.runtime.topology import data_dir

from .archive import Archiver, TableArchive
from .dispatch import TaskQueue, TaskSender
from .engines import EngineClients
from .idempotency import IdempotencyStore
from .move_limits import MoveLimits
from .players import PlayerBook
from .ratings import RatingBook
from .settings import Settings
from .store import TableStore, Timing
from .stream_hub import StreamHub
from .stream_tickets import StreamTickets
from .table_caps import WaitingCap
from .tables import TableService
from .tickets import MatchmakingService


@dataclass
class Platform:
    settings: Settings
    redis: RedisClient
    engines: EngineClients
    store: TableStore
    tasks: TaskQueue
    ratings: RatingBook
    tables: TableService
    matchmaking: MatchmakingService
    players: PlayerBook
    archiver: Archiver
    stream_tickets: StreamTickets
    idempotency: IdempotencyStore
    move_limits: MoveLimits
    # Every event stream of this process, over one subscription per Redis node; it opens
    # its connections at the first stream, so a worker that serves none holds none.
    streams: StreamHub
    # The table reads of streams, on their own small pool (see build).
    stream_tables: TableService
    waiting_cap: WaitingCap

    @classmethod
    def build(cls, settings: Settings, sender: TaskSender) -> Platform:
        """`sender` queues table tasks by name: the gateway's light Celery client
        (services.runtime.task_client) or a worker's own app."""
        client = connect(
            settings.redis_url,
            settings.redis_cluster,
            settings.redis_max_connections,
            settings.redis_wait_seconds,
        )
        engines = EngineClients(settings)
        timing = Timing(settings.bot_grace_seconds, settings.away_seconds)
        archive = TableArchive(
            Path(settings.archive_dir) if settings.archive_dir else data_dir() / "archive" / "tables"
        )
        store = TableStore(
            client,
            timing,
            settings.finished_ttl_seconds,
            engines.games,
            settings.index_grace_seconds,
            archive,
        )
        archiver = Archiver(client, archive, engines.games, settings.archive_grace_seconds)
        tasks = TaskQueue(sender)
        ratings = RatingBook(client, store)
        tables = TableService(settings, store, engines, tasks, ratings)
        matchmaking = MatchmakingService(client, engines, tables, ratings, tasks, settings.match_policy)
        players = PlayerBook(client, settings.session_ttl_seconds, guest_ttl=settings.guest_ttl_seconds)
        stream_tickets = StreamTickets(client, settings.stream_ticket_seconds)
        idempotency = IdempotencyStore(
            client, settings.idempotency_seconds, settings.idempotency_pending_seconds
        )
        moves = MoveLimits(client, settings.move_tries_per_decision, settings.move_window_seconds)
        # What streams read after a nudge (the log, the state) goes through a small pool
        # of its own: however many watchers a move wakes, they use at most
        # stream_read_connections, and moves and `/healthz` never wait behind them.
        read_connections = settings.stream_read_connections
        if is_cluster(client):
            # A cluster's client keeps a pool per master, each up to its size: 8 each
            # beside one reader per master was 26 connections for the streams on 3
            # masters. The budget is split over the masters instead, and the reads at
            # once are as many as one master's pool holds, so no pool refuses a read.
            read_connections = max(1, read_connections // max(1, len(client.get_primaries())))
        reads = connect(
            settings.redis_url, settings.redis_cluster, read_connections, settings.redis_wait_seconds
        )
        read_store = TableStore(
            reads, timing, settings.finished_ttl_seconds, engines.games, settings.index_grace_seconds, archive
        )
        stream_tables = TableService(settings, read_store, engines, tasks, ratings)
        streams = StreamHub(
            client,
            settings.stream_cap,
            read_connections,
            lambda: drop_idle_connections(reads),
        )
        return cls(
            settings, client, engines, store, tasks, ratings, tables, matchmaking, players,
            archiver, stream_tickets, idempotency, moves, streams, stream_tables,
            WaitingCap(client, settings.max_waiting_tables, settings.waiting_ttl_seconds),
        )  # fmt: skip

    def close(self) -> None:
        self.streams.close()
        self.stream_tables.store.redis.close()
        self.store.close()
        self.engines.close()
        self.tasks.close()
        self.redis.close()
