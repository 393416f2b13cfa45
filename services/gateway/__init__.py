"""The Flask gateway: lobby, tables, seats, matchmaking and the match API (issue 6).

`create_app(settings)` builds the app; gunicorn serves `services.gateway:create_app()`
(see deploy/gunicorn.conf.py). Each area is a blueprint module listed in BLUEPRINTS that
exposes `bp` and `OPENAPI_PATHS` (and optionally `OPENAPI_SCHEMAS`), so adding an area is
one line here and its routes and their documentation stay together.
"""

from __future__ import annotations

import importlib
import time

from flask import Flask, g, request
from werkzeug.middleware.proxy_fix import ProxyFix

from services.platform.context import Platform
from services.platform.settings import Settings
from services.runtime.task_client import task_client

from . import cors, csrf, errors, guards, hashing, headers, idempotency, request_bounds
from .json_provider import OrjsonProvider
from .metrics import REQUEST_SECONDS
from .openapi import document
from .versions import versioned

BLUEPRINTS = [
    "services.gateway.ops_api",
    "services.gateway.lobby_api",
    "services.gateway.matches_api",
    "services.gateway.chat_api",
    "services.gateway.matchmaking_api",
    "services.gateway.players_api",
    "services.gateway.replays_api",
    "services.gateway.sweeps_api",
    "services.gateway.tunes_api",
    "services.gateway.cards_api",
    "services.gateway.pages",
    "services.gateway.ops_dashboards",
    "services.gateway.designer",
]


def create_app(settings: Settings | None = None) -> Flask:
    settings = settings or Settings.from_env()
    app = Flask(__name__, static_folder=None)
    app.json = OrjsonProvider(app)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_content_length
    app.extensions["cultists"] = Platform.build(
        settings, task_client(settings.task_broker_url, "cultists-gateway")
    )
    paths: dict = {}
    schemas: dict = {}
    for name in BLUEPRINTS:
        module = importlib.import_module(name)
        app.register_blueprint(module.bp)
        paths.update(module.OPENAPI_PATHS)
        schemas.update(getattr(module, "OPENAPI_SCHEMAS", {}))
    gw = app.extensions["cultists"]
    gw.players.hasher = hashing.ProcessHasher()  # Argon2 in its own process (hashing.py)
    app.extensions["cultists.openapi"] = document(paths, schemas, gw.engines.games, gw.engines.messages)
    errors.register(app)
    csrf.install(app, settings.cors_origins)  # first: a forged write is refused before it counts
    guards.install(app, settings)
    idempotency.install(app)  # after the rate limits: a retry is a write like any other
    cors.install(app, settings.cors_origins)
    headers.install(app)
    request_bounds.register(app)  # first of the request hooks, whatever registered before
    _time_requests(app)
    app.wsgi_app = versioned(app.wsgi_app)  # type: ignore[method-assign, assignment]  # (guards.py)
    if settings.trusted_proxies:
        # The client's address from X-Forwarded-For, as many hops back as there are
        # proxies we run; without them the header is the client's own claim, ignored.
        # Outermost, so the guards' penalty box sees the address the limits count.
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n)  # type: ignore[method-assign]
    return app


def _time_requests(app: Flask) -> None:
    """Request latency by route template (not raw path: table ids would explode the labels)."""

    @app.before_request
    def _start() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def _observe(response):
        rule = request.url_rule.rule if request.url_rule is not None else "unmatched"
        started = g.get("started")
        if started is not None:
            REQUEST_SECONDS.labels(rule, request.method, str(response.status_code)).observe(
                time.perf_counter() - started
            )
        return response
