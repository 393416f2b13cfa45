"""Browser fixtures: the real gateway served over HTTP on a free port, driven by headless
Chromium through Playwright.

The gateway is the gateway tests' own app (`tests/gateway/conftest.py`: real Redis, real
engine gRPC servers, a real Celery worker for bot seats), imported rather than rebuilt, and
served by werkzeug's threaded server so event streams and page requests run side by side.
The browser is the session-wide `browser` of tests/conftest.py (Debian's Chromium).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from services.platform.settings import Settings
from tests.gateway.conftest import (  # the gateway tests' own fixtures, reused
    AWAY_SECONDS,
    BOT_GRACE_SECONDS,
    LiveStore,
    app,  # noqa: F401
    client,  # noqa: F401
    table_worker,  # noqa: F401
)

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="package")
def live_store(redis_url: str, tmp_path_factory) -> LiveStore:
    """Pages on one Redis (the gateway tests run live play on a cluster too)."""
    return LiveStore("single", redis_url, False, redis_url, str(tmp_path_factory.mktemp("archive-browser")))


@pytest.fixture(scope="package")
def gateway_settings(live_store: LiveStore, engines: dict) -> Settings:
    """The gateway tests' settings (the imported `app` is built from this), with a short
    event-stream heartbeat: a stream notices its page is gone at its next write, so
    streams end within half a second of their browser context closing."""
    return Settings(
        redis_url=live_store.url,
        archive_dir=live_store.archive_dir,
        engine_addresses={g: f"127.0.0.1:{e.port}" for g, e in engines.items()},
        bot_grace_seconds=BOT_GRACE_SECONDS,
        away_seconds=AWAY_SECONDS,
        stream_heartbeat_seconds=0.5,
        # Every page of every test is a new guest from 127.0.0.1 (test_limits.py checks it).
        rate_limit_guest="",
    )


@pytest.fixture()
def server(app, table_worker) -> Iterator[str]:  # noqa: F811 - the imported fixtures
    """The app on a real HTTP server on a free loopback port; yields its base URL.

    Request threads are joined on the way out (`block_on_close`), so no event stream is
    still reading Redis when the app fixture closes its clients."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    httpd.daemon_threads = False
    httpd.block_on_close = True
    thread = threading.Thread(target=httpd.serve_forever, name="gateway-http", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


# What the table page keeps in localStorage for its player: tests that count clicks and
# compare every version want each move shown at once and nothing answered for them.
INSTANT = {"cultists:pace": "0", "cultists:auto-pass": "0"}


@pytest.fixture()
def new_context(browser, server):
    """Opens browser contexts (separate storage: separate players) and closes them before
    the server stops, so no event stream outlives its test. `settings` are localStorage
    entries set before any page script runs (default INSTANT; {} keeps the page's own
    defaults: moves played out at the normal pace, forced answers taken for you)."""
    opened = []

    def open_context(viewport: dict[str, int] | None = None, settings: dict[str, str] | None = None):
        context = browser.new_context(base_url=server, viewport=viewport or DESKTOP)
        context.set_default_timeout(30_000)
        entries = INSTANT if settings is None else settings
        if entries:
            script = "".join(f"localStorage.setItem({k!r}, {v!r});" for k, v in entries.items())
            context.add_init_script(f"try {{ {script} }} catch (e) {{}}")
        opened.append(context)
        return context

    yield open_context
    for context in opened:
        context.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
