"""The one panel list behind every dashboard: Grafana's JSON and the gateway's /ops page.

Both are drawn from `DASHBOARDS`, so a panel added here appears in Grafana (after
`python deploy/grafana/build_dashboards.py`) and on /ops (at once), with the same query,
unit and legend. It is also the gateway's allow-list: /ops only ever asks Prometheus the
queries written here, so no PromQL travels from a browser.

A query's `$game` stands for one game: Grafana repeats such a panel once per value of its
`game` variable, and /ops draws one panel per game the gateway offers (the name is checked
against that list before it is put in the query). Legends use Grafana's `{{label}}` form.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    # Stable slug: the /ops data URL and the page's test ids use it.
    id: str
    title: str
    # Grafana unit id (s, reqps, ops, short, percentunit); /ops formats the same ones.
    unit: str
    queries: tuple[Query, ...]
    # What the panel tells an operator: Grafana's panel description and /ops's caption.
    help: str
    # "timeseries" (a range query per refresh) or "alerts" (the alerts Prometheus holds).
    kind: str = "timeseries"

    @property
    def per_game(self) -> bool:
        return any("$game" in q.expr for q in self.queries)


@dataclass(frozen=True)
class Dashboard:
    uid: str
    title: str
    panels: tuple[Panel, ...]


def _q(expr: str, legend: str) -> Query:
    return Query(expr, legend)


LATENCY = "game_method:cultists_engine_rpc_latency_seconds"

DASHBOARDS: tuple[Dashboard, ...] = (
    Dashboard("engines", "Cultists / Engine latency", (
        Panel("alerts", "Alerts firing", "short",
              (_q('ALERTS{alertstate="firing"}', "{{alertname}} {{game}} {{instance}}"),),
              "Every alert Prometheus holds now, with its summary; pending ones are about to fire.",
              kind="alerts"),
        Panel("engine-latency", "Engine latency: $game", "s",
              (_q(f'{LATENCY}:p50{{game="$game"}}', "{{method}} p50"),
               _q(f'{LATENCY}:p95{{game="$game"}}', "{{method}} p95"),
               _q(f'{LATENCY}:p99{{game="$game"}}', "{{method}} p99")),
              "Server-side time of each RPC, by method: Apply is a player's move, View a page "
              "refresh, SuggestAction a bot's think. p99 above 50 ms for 5 minutes pages."),
        Panel("engine-calls", "Engine calls per second", "reqps",
              (_q("sum by (game, method) (rate(cultists_engine_rpc_duration_seconds_count[1m]))",
                  "{{game}} {{method}}"),),
              "Load on each engine; latency that rises with this is capacity, without it a regression."),
        Panel("engine-errors", "Engine errors per second by code", "reqps",
              (_q("sum by (game, method, code) (rate(cultists_engine_rpc_errors_total[1m]))",
                  "{{game}} {{method}} {{code}}"),),
              "FAILED_PRECONDITION and INVALID_ARGUMENT are clients' mistakes; INTERNAL, UNKNOWN "
              "or DEADLINE_EXCEEDED are the engine's own failures."),
        Panel("moves", "Moves applied per second", "ops",
              (_q("game:cultists_engine_moves:rate1m", "{{game}}"),),
              "Actions the engines accepted, humans' and bots' alike: how busy live play is."),
        Panel("games", "Games started and finished per minute", "short",
              (_q("sum by (game) (rate(cultists_engine_games_started_total[5m])) * 60", "{{game}} started"),
               _q("sum by (game) (rate(cultists_engine_games_finished_total[5m])) * 60", "{{game}} finished")),
              "Started well above finished for long means tables are being abandoned."),
    )),
    Dashboard("tables", "Cultists / Tables and matchmaking", (
        Panel("open-tables", "Live tables by status", "short",
              (_q("sum by (status) (cultists_gateway_open_tables)", "{{status}}"),),
              "Tables waiting for players and tables being played, across every gateway."),
        Panel("queued-tickets", "Matchmaking queue length", "short",
              (_q("sum by (game) (cultists_gateway_queued_tickets)", "{{game}}"),),
              "Tickets waiting for a table; over 50 and still growing for 10 minutes raises a ticket."),
        Panel("time-to-match", "Time to match p50 / p99", "s",
              (_q("cultists_gateway_time_to_match_seconds:p50", "p50"),
               _q("cultists_gateway_time_to_match_seconds:p99", "p99")),
              "How long a player waits in the queue before a table forms (5-minute window)."),
        Panel("gateway-rps", "Gateway requests per second by route", "reqps",
              (_q("sum by (route) (rate(cultists_gateway_request_duration_seconds_count[1m]))", "{{route}}"),),
              "What players and pages ask for; the route template, never a raw path."),
        Panel("gateway-latency", "Gateway p99 latency by route", "s",
              (_q("route:cultists_gateway_request_latency_seconds:p99", "{{route}}"),),
              "What a browser waits for, engine call and Redis included (5-minute window)."),
        Panel("gateway-status", "Gateway requests per second by status", "reqps",
              (_q("sum by (status) (rate(cultists_gateway_request_duration_seconds_count[1m]))", "{{status}}"),),
              "4xx are refused requests (illegal moves, stale versions); 5xx are the gateway's own."),
        Panel("gateway-engine-latency", "Gateway -> engine call p99", "s",
              (_q("histogram_quantile(0.99, sum by (game, method, le) "
                  "(rate(cultists_gateway_engine_call_duration_seconds_bucket[5m])))", "{{game}} {{method}}"),),
              "Engine latency as the gateway feels it: the gap to the engine's own figure is network "
              "and serialisation."),
        Panel("gateway-engine-errors", "Gateway -> engine errors", "reqps",
              (_q("sum by (game, code) (rate(cultists_gateway_engine_errors_total[5m]))", "{{game}} {{code}}"),),
              "UNAVAILABLE here while the engine panel is quiet means the gateway cannot reach it."),
        Panel("celery-queues", "Celery queue length", "short",
              (_q("cultists_celery_queue_length", "{{queue}}"),),
              "Bot moves (tables) and sweep chunks (sweeps) not yet taken by a worker."),
    )),
    Dashboard("sweeps", "Cultists / Balance sweeps", (
        Panel("sweep-games", "Games simulated per second", "ops",
              (_q("game:cultists_sweep_games:rate1m", "{{game}}"),),
              "Sweep throughput, summed over every sweep worker."),
        Panel("sweep-progress", "Sweep progress", "percentunit",
              (_q("cultists_sweep_progress_ratio", "{{sweep}} {{game}}"),),
              "Share of each sweep's games played; a line that stops short of 100% is a stuck sweep."),
        Panel("sweep-chunks", "Chunks by outcome per minute", "short",
              (_q("sum by (outcome) (rate(cultists_sweep_chunks_total[5m])) * 60", "{{outcome}}"),),
              "Failed chunks point at a crashing worker or a rules bug a bot ran into; duplicates are "
              "redelivered chunks already stored (a worker died after finishing one)."),
        Panel("sweep-chunk-duration", "Chunk duration p90", "s",
              (_q("histogram_quantile(0.9, sum by (game, le) "
                  "(rate(cultists_sweep_chunk_duration_seconds_bucket[10m])))", "{{game}}"),),
              "How long one chunk of games takes; it bounds how fast a sweep can be cancelled."),
        Panel("balance-drift", "Balance drift (metrics beyond their interval)", "short",
              (_q("cultists_balance_drift", "{{game}}"),),
              "From the nightly suite: win-rate metrics that moved beyond their interval since the "
              "night before. Above zero raises a ticket."),
        Panel("balance-flagged", "Flagged cells (Benjamini-Hochberg)", "short",
              (_q("cultists_balance_flagged_cells", "{{game}}"),),
              "Sweep cells whose seat win rates differ beyond chance, after the false-discovery correction."),
        Panel("first-seat", "First-seat advantage", "percentunit",
              (_q("cultists_balance_first_seat_advantage", "{{game}} {{cell}}"),),
              "Seat 0's win rate above a fair share, per nightly cell."),
        Panel("workers-up", "Workers up", "short",
              (_q('up{job="workers"}', "{{instance}}"),),
              "1 while Prometheus can scrape a Celery worker; 0 for two minutes pages."),
    )),
)  # fmt: skip


def panels() -> dict[str, Panel]:
    """Every panel by id (ids are unique across dashboards; a test keeps them so)."""
    return {p.id: p for board in DASHBOARDS for p in board.panels}


def expand(expr: str, game: str | None) -> str:
    """A query with `$game` filled in. `game` must already be a known game's name: it goes
    into PromQL as a label value, so callers check it against the games they offer."""
    if "$game" not in expr:
        return expr
    if game is None:
        raise ValueError("this panel is drawn per game: name one")
    return expr.replace("$game", game)
