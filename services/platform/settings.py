"""Gateway configuration as one object, read from the environment once.

Everything a test or a deployment may want to change lives here, so the app factory, the
Celery tasks and the bench build the same gateway from the same object; tests pass their
own (engine addresses of in-process servers, a throwaway Redis) instead of patching.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from services.runtime.topology import engine_address

from .deal import secret_from_env
from .matchmaking import MatchPolicy
from .quotas import DesignerQuotas


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    return float(raw) if raw else default


def _env_list(name: str) -> tuple[str, ...]:
    """A comma- or space-separated list, e.g. GATEWAY_CORS_ORIGINS="https://a.example,https://b.example"."""
    return tuple(part for part in re.split(r"[,\s]+", os.environ.get(name, "")) if part)


@dataclass
class Settings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    # REDIS_URL names any node of a Redis Cluster (redis_client.py).
    redis_cluster: bool = False
    # The Celery broker the table tasks are queued on: its own URL (CELERY_BROKER_URL), by
    # default the store's Redis outside cluster mode (kombu cannot use a cluster).
    broker_url: str | None = None
    # Connections one process may hold for its requests (event streams share one
    # subscription per Redis node, stream_hub.py). At the limit a request waits up to
    # redis_wait_seconds for one to come back, then fails with 503.
    redis_max_connections: int = 1000
    redis_wait_seconds: float = 10.0
    # Game name -> "host:port"; games missing here fall back to the topology's address.
    engine_addresses: dict[str, str] = field(default_factory=dict)
    # Games the gateway offers; None: every game installed in this checkout.
    games: list[str] | None = None
    engine_timeout: float = 5.0
    # Largest request body accepted (413 above it); actions and configs are tiny.
    max_content_length: int = 64 * 1024
    # Default time a human seat has for one decision before its bot acts for it.
    decision_seconds: float = 60.0
    min_decision_seconds: float = 1.0
    max_decision_seconds: float = 24 * 3600.0
    # Safety net for bot seats: the bot task is queued at once, the deadline only catches
    # a lost task (a worker killed between the commit and the queueing).
    bot_grace_seconds: float = 3.0
    # A bot move that failed because the engine (or Redis) was away is tried again after
    # a backoff that grows from a quarter of this to this (the retry interval): a table is
    # never left stalled for longer than this once the engine is back.
    engine_retry_seconds: float = 1.0
    # A seat that timed out is "away": its next decisions wait this long, not a full
    # deadline, until the player shows up again with the token.
    away_seconds: float = 5.0
    # How long a finished table (its replay and log) is kept in Redis at most: the
    # archiver moves it to the archive after archive_grace_seconds (archive.py), so this
    # is only a backstop for a platform whose archiver does not run.
    finished_ttl_seconds: int = 7 * 24 * 3600
    archive_grace_seconds: float = 600.0
    # Where archived tables' Parquet files go; None: the data folder's archive/tables/.
    archive_dir: str | None = None
    # How long a table may wait for its players: past this it is gone (keys expire), so
    # tables opened and abandoned, or opened by the thousand, do not fill Redis.
    waiting_ttl_seconds: int = 2 * 3600
    # An index entry whose table is missing is dropped once older than this (a creation
    # lists a table just before writing it: store.py).
    index_grace_seconds: float = 30.0
    # What one table's bot seats may search per decision, added over its seats
    # (bounds.check_table_bots); each seat alone is bounded by bounds.BOT_PARAM_MAX.
    table_bot_iterations: int = 3000
    table_bot_ms: float = 3000.0
    # A table with no human seat moves its bots for this long per task, then queues its
    # next stretch behind every table a human waits at (dispatch.py: priorities), so
    # bot-only tables never hold a tables worker from a human's bot opponents for long.
    bot_only_slice_seconds: float = 1.0
    # Largest engine state a table may hold (a normal one is 1-3 KB); a config that deals
    # more is refused when the table is opened.
    max_state_bytes: int = 64 * 1024
    # How long a player session lasts (guests sign in again from their device id).
    session_ttl_seconds: int = 30 * 24 * 3600
    # Wall-clock cap of one replay rebuild (a sweep game played again with its bots).
    replay_build_seconds: float = 10.0
    # Writes (POST/PUT/PATCH/DELETE under /api) one address, and one player session, may
    # make: Flask-Limiter notation, several joined by ";". Empty: no limit of that kind.
    rate_limit_address: str = "50/second;1200/minute"
    rate_limit_player: str = "20/second;600/minute"
    # New guests (POST /api/players/guest) one address may make: each is a player, a device
    # and a session in Redis (they expire, guest_ttl_seconds, but a burst must not fill it).
    rate_limit_guest: str = "20/minute;200/hour"
    # A guest nobody signs in as for this long is gone (player, device and sessions).
    guest_ttl_seconds: int = 30 * 24 * 3600
    # Waiting tables one player (or, unsigned, one address) may hold open at once; 0: no cap.
    max_waiting_tables: int = 5
    # A writer already refused in the window who writes again is answered this much later
    # (at most until the window resets): a flood's connections then wait instead of
    # costing the gateway a response each. Cooperative under gevent. 0: answer at once.
    rate_limit_tarpit_seconds: float = 0.25
    # Proxies in front of the gateway whose X-Forwarded-For (and -Proto) to believe: 0 for
    # a gateway clients reach directly (the header is then a client's claim and ignored);
    # 1 behind one ingress or load balancer that appends the client's address. Rate limits
    # of anonymous writes count that address, so behind a proxy set this, or every client
    # shares the proxy's address.
    trusted_proxies: int = 0
    # Server-sent events: a stream ends after this long (the client reconnects with
    # Last-Event-ID) and sends a comment line this often to keep proxies from closing it.
    stream_max_seconds: float = 300.0
    stream_heartbeat_seconds: float = 5.0
    # Event streams one gateway process serves at once; past it a new one is 503 with
    # Retry-After at once. Below gunicorn's worker_connections (1000 by default), so a
    # process full of streams still accepts ordinary requests and `/healthz`.
    stream_cap: int = 800
    # Redis connections (per node) the streams of one process read through after a
    # nudge, shared by all of them and apart from the requests' pool (context.py).
    stream_read_connections: int = 8
    match_policy: MatchPolicy = field(default_factory=MatchPolicy)
    # Origins (scheme://host[:port]) whose pages may call the API from a browser (CORS);
    # none by default: the gateway's own pages are same-origin and need none.
    cors_origins: tuple[str, ...] = ()
    # How long a write's answer is kept for a retry with the same Idempotency-Key, and how
    # long a first attempt still running holds its key (a retry then hears 409).
    idempotency_seconds: int = 3600
    idempotency_pending_seconds: int = 30
    # A stream ticket (`?ticket=` for a browser EventSource) is good once, for this long.
    stream_ticket_seconds: int = 30
    # A seat may send this many moves at one decision (one version of its table) within
    # `move_window_seconds`; a client that moves once each time it is asked never gets
    # near it. Moves do not count against the write limits above.
    move_tries_per_decision: int = 30
    move_window_seconds: int = 60
    # Queue bot moves on Celery (off for a gateway process that must never queue, e.g. the
    # schemathesis run with no worker; deadlines still catch what was not queued).
    dispatch_tasks: bool = True
    # Prometheus's base URL for the /ops dashboards (None: the page says there is none), and
    # how long one answer is shared by every viewer (the page refreshes every few seconds).
    prometheus_url: str | None = None
    dashboards_cache_seconds: float = 5.0
    # The secret live tables' deal keys are derived from (deal.py, CULTISTS_DEAL_SECRET);
    # by default one random per process, which deals and replays as well (keys are stored).
    deal_secret: bytes = field(default_factory=secret_from_env, repr=False)
    # What Prometheus sends (`Authorization: Bearer ...`) to scrape the gateway's /metrics;
    # without it only an operator's session reads them. `cultists run` makes one per run.
    metrics_token: str | None = None
    # Or a port of the gateway's own that only Prometheus reaches (GATEWAY_METRICS_PORT,
    # docker-compose and k8s): a request that arrived on it reads /metrics without a session.
    metrics_port: int | None = None
    # What one designer may have computed at once (quotas.py; QUOTA_* variables).
    quotas: DesignerQuotas = field(default_factory=DesignerQuotas)

    @property
    def task_broker_url(self) -> str:
        if self.broker_url:
            return self.broker_url
        if self.redis_cluster:
            raise ValueError(
                "REDIS_CLUSTER=true needs CELERY_BROKER_URL: Celery's broker cannot be a cluster"
            )
        return self.redis_url

    def engine_address(self, game: str) -> str:
        return self.engine_addresses.get(game) or engine_address(game)

    @classmethod
    def from_env(cls) -> Settings:
        """The settings a gunicorn worker or Celery worker runs with."""
        policy = MatchPolicy(
            base_gap=_env_float("MATCH_BASE_GAP", MatchPolicy.base_gap),
            gap_per_second=_env_float("MATCH_GAP_PER_SECOND", MatchPolicy.gap_per_second),
            max_gap=_env_float("MATCH_MAX_GAP", MatchPolicy.max_gap),
            fill_with_bots_after=_env_float("MATCH_FILL_WITH_BOTS_AFTER", MatchPolicy.fill_with_bots_after),
        )
        return cls(
            redis_url=os.environ.get("REDIS_URL", cls.redis_url),
            redis_cluster=os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes"),
            broker_url=os.environ.get("CELERY_BROKER_URL") or None,
            redis_max_connections=int(
                os.environ.get("GATEWAY_WORKER_CONNECTIONS") or cls.redis_max_connections
            ),
            decision_seconds=_env_float("GATEWAY_DECISION_SECONDS", cls.decision_seconds),
            bot_grace_seconds=_env_float("GATEWAY_BOT_GRACE_SECONDS", cls.bot_grace_seconds),
            engine_retry_seconds=_env_float("GATEWAY_ENGINE_RETRY_SECONDS", cls.engine_retry_seconds),
            away_seconds=_env_float("GATEWAY_AWAY_SECONDS", cls.away_seconds),
            finished_ttl_seconds=int(_env_float("GATEWAY_FINISHED_TTL_SECONDS", cls.finished_ttl_seconds)),
            archive_grace_seconds=_env_float("GATEWAY_ARCHIVE_GRACE_SECONDS", cls.archive_grace_seconds),
            archive_dir=os.environ.get("CULTISTS_ARCHIVE_DIR") or None,
            waiting_ttl_seconds=int(_env_float("GATEWAY_WAITING_TTL_SECONDS", cls.waiting_ttl_seconds)),
            table_bot_iterations=int(_env_float("GATEWAY_TABLE_BOT_ITERATIONS", cls.table_bot_iterations)),
            table_bot_ms=_env_float("GATEWAY_TABLE_BOT_MS", cls.table_bot_ms),
            bot_only_slice_seconds=_env_float("TABLES_BOT_ONLY_SLICE_SECONDS", cls.bot_only_slice_seconds),
            rate_limit_address=os.environ.get("GATEWAY_RATE_LIMIT_ADDRESS", cls.rate_limit_address),
            rate_limit_player=os.environ.get("GATEWAY_RATE_LIMIT_PLAYER", cls.rate_limit_player),
            rate_limit_guest=os.environ.get("GATEWAY_RATE_LIMIT_GUEST", cls.rate_limit_guest),
            max_waiting_tables=int(os.environ.get("GATEWAY_MAX_WAITING_TABLES") or cls.max_waiting_tables),
            rate_limit_tarpit_seconds=_env_float(
                "GATEWAY_RATE_LIMIT_TARPIT_SECONDS", cls.rate_limit_tarpit_seconds
            ),
            trusted_proxies=int(os.environ.get("GATEWAY_TRUSTED_PROXIES") or cls.trusted_proxies),
            stream_heartbeat_seconds=_env_float(
                "GATEWAY_STREAM_HEARTBEAT_SECONDS", cls.stream_heartbeat_seconds
            ),
            stream_cap=int(os.environ.get("GATEWAY_STREAM_CAP") or cls.stream_cap),
            match_policy=policy,
            cors_origins=_env_list("GATEWAY_CORS_ORIGINS"),
            idempotency_seconds=int(_env_float("GATEWAY_IDEMPOTENCY_SECONDS", cls.idempotency_seconds)),
            move_tries_per_decision=int(
                _env_float("GATEWAY_MOVE_TRIES_PER_DECISION", cls.move_tries_per_decision)
            ),
            prometheus_url=os.environ.get("PROMETHEUS_URL") or None,
            dashboards_cache_seconds=_env_float("DASHBOARDS_CACHE_SECONDS", cls.dashboards_cache_seconds),
            deal_secret=secret_from_env(),
            metrics_token=os.environ.get("GATEWAY_METRICS_TOKEN") or None,
            metrics_port=int(os.environ["GATEWAY_METRICS_PORT"])
            if os.environ.get("GATEWAY_METRICS_PORT")
            else None,
            quotas=DesignerQuotas.from_env(),
        )
