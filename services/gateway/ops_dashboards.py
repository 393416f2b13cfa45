"""/ops: the platform's dashboards in the web app, drawn from Prometheus (issue 20).

The page draws the panels of `services/dashboards/panels.py`, the same list Grafana's JSON
is written from, with uPlot (a static file from the npm registry, no build step). Its
script never sends PromQL: it names a panel (and a game, for per-game panels) and a time
range from a fixed list, and this blueprint runs that panel's own queries. Answers are
kept in Redis for a few seconds under a key every gateway process shares, with the range's
end aligned to its step, so any number of viewers on any number of workers cost Prometheus
one query per panel per step.

Routes (not under /api, so not in the OpenAPI document):

- `/ops`                          the page
- `/ops/data/panels/<id>`         one time-series panel (`?range=1h`, `&game=` when per game)
- `/ops/data/alerts`              the alerts Prometheus holds now
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from typing import Any, Literal

import orjson
from flask import Blueprint, Response, current_app, render_template, request
from pydantic import ConfigDict, Field

from services.dashboards.panels import DASHBOARDS, Panel, panels
from services.dashboards.prometheus_api import Prometheus, PrometheusError, Window, alerts_data, panel_data
from services.gateway.context import current
from services.platform.errors import PlatformError

from .auth import require_role
from .schemas import Body, validate

bp = Blueprint(
    "dashboards",
    __name__,
    template_folder="templates",
    static_folder="static/ops",  # only the page's own files (and uPlot) are served from here
    static_url_path="/ops/static",
)

OPENAPI_PATHS: dict[str, Any] = {}  # a page and its own data, not the public API

# Time ranges the picker offers (seconds) and the points drawn across each.
RANGES = {"5m": 300, "15m": 900, "1h": 3600, "6h": 21600, "24h": 86400, "7d": 604800}
POINTS = 300
REFRESH_CHOICES = (0, 5, 10, 30, 60)  # seconds; 0 is off
CACHE_PREFIX = "ops:cache:"
LOCK_PREFIX = "ops:lock:"


def game_title(game: str) -> str:
    """A per-game panel's name without asking the engine: the page must work while one is down."""
    return game.replace("_", " ").title()


def _prometheus() -> Prometheus:
    url = current().settings.prometheus_url
    if not url:
        raise PlatformError(
            503, "no_prometheus", "this gateway has no Prometheus to ask (set PROMETHEUS_URL)"
        )
    client = current_app.extensions.get("cultists.prometheus")
    if client is None or client.base_url != url.rstrip("/"):
        client = current_app.extensions["cultists.prometheus"] = Prometheus(url)
    return client


def _cached(key: str, fetch: Callable[[], dict[str, Any]]) -> Response:
    """The JSON answer for `key` from the shared cache, or fetched once while others wait.

    Whoever takes the short Redis lock asks Prometheus; the others poll the cache, and take
    the lock in turn if it goes without an answer (Prometheus failed: one asks again, not
    all at once). Past Prometheus's timeout a viewer asks on its own, so a holder that died
    cannot leave the page blank."""
    seconds = current().settings.dashboards_cache_seconds
    client = _prometheus()
    r = current().redis
    # Gateways asking different Prometheus servers may share a Redis: never each other's answers.
    key = f"{zlib.crc32(client.base_url.encode()):08x}:{key}"
    body = r.get(CACHE_PREFIX + key)
    holder = False
    deadline = time.monotonic() + client.timeout
    while body is None and seconds > 0 and time.monotonic() < deadline:
        holder = bool(r.set(LOCK_PREFIX + key, b"1", nx=True, px=int(client.timeout * 1000)))
        if holder:
            # The last holder may have stored its answer and let go between our read of the
            # cache and our taking the lock: read again, or two viewers ask Prometheus.
            body = r.get(CACHE_PREFIX + key)
            if body is not None:
                r.delete(LOCK_PREFIX + key)
            break
        time.sleep(0.05)
        body = r.get(CACHE_PREFIX + key)
    if body is None:
        try:
            body = orjson.dumps(fetch())
            if seconds > 0:  # stored before the lock goes, so no one asks again meanwhile
                r.set(CACHE_PREFIX + key, body, px=int(seconds * 1000))
        except PrometheusError as exc:
            raise PlatformError(502, "prometheus_unavailable", str(exc)) from None
        finally:
            if holder:
                r.delete(LOCK_PREFIX + key)
    response = Response(body, mimetype="application/json")
    response.headers["Cache-Control"] = "no-store"
    return response


class PanelQuery(Body):
    """What a panel's data may be asked with; anything else in the URL is ignored (the
    panel's own queries are what run, never one from the page)."""

    model_config = ConfigDict(strict=False)  # query strings are text

    range: Literal[tuple(RANGES)] = Field("1h", description="the time range drawn")  # type: ignore[valid-type]
    game: str | None = Field(
        None, description="the game of a per-game panel (needed there, refused elsewhere)"
    )


def _panel_or_404(panel_id: str) -> Panel:
    panel = panels().get(panel_id)
    if panel is None or panel.kind != "timeseries":
        raise PlatformError(404, "unknown_panel", f"no time-series panel {panel_id!r} on the dashboards")
    return panel


@bp.get("/ops")
def page():
    """The page itself, for anyone: it holds only the panels' names (the project's own
    dashboards); every number on it comes from the operator-only data routes, which the
    page's script asks with the operator's session."""
    games = current().engines.games
    boards = [
        {
            "uid": board.uid,
            "title": board.title.split(" / ", 1)[-1],
            "panels": [
                {"id": p.id, "title": p.title, "unit": p.unit, "help": p.help, "kind": p.kind,
                 "games": [{"game": g, "title": p.title.replace("$game", game_title(g))} for g in games]
                 if p.per_game else None}
                for p in board.panels
            ],
        }
        for board in DASHBOARDS
    ]  # fmt: skip
    return render_template(
        "ops.html",
        boards=boards,
        ranges=list(RANGES),
        refresh_choices=REFRESH_CHOICES,
        prometheus=bool(current().settings.prometheus_url),  # never its address: a public page
    )


@bp.get("/ops/data/panels/<panel_id>")
def panel(panel_id: str):
    """Operators only: a panel's series from Prometheus."""
    require_role("operator")
    panel = _panel_or_404(panel_id)
    query = validate(PanelQuery, request.args.to_dict())
    game = query.game
    if panel.per_game:  # the games this gateway serves are known only at run time
        games = current().engines.games
        if game not in games:
            raise PlatformError(400, "malformed", f"'game' is one of {', '.join(games)}", field="game")
    elif game is not None:
        raise PlatformError(
            400, "malformed", f"panel {panel_id!r} is not drawn per game: leave 'game' out", field="game"
        )
    client = _prometheus()
    window = Window.ending(time.time(), RANGES[query.range], POINTS)
    key = f"panel:{panel.id}:{game or ''}:{window.start}:{window.end}:{window.step}"
    return _cached(key, lambda: panel_data(client, panel, game, window))


@bp.get("/ops/data/alerts")
def alerts():
    """Operators only: the firing alerts."""
    require_role("operator")
    client = _prometheus()
    return _cached("alerts", lambda: alerts_data(client))
