"""Fixtures that start real servers: Redis, gRPC engines and headless Chromium, on free
loopback ports."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from services.runtime.embedded_redis import start_redis

# The per-user default data folder (services/runtime/data_folder.py) is a scratch one for
# the whole run, inherited by every process a test starts: no test reads or writes the
# real ~/.local/share/cultists, and a `cultists run` a test starts never registers where
# the user's own commands would find it.
os.environ["XDG_DATA_HOME"] = tempfile.mkdtemp(prefix="cultists-tests-home-")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """REDIS_URL if given (a database the tests may flush), else our own real redis-server.

    Under parallel workers (`make test` runs them) each worker takes its own database of a
    given Redis, counting up from the URL's: every test flushes what it uses, and two
    workers must never flush each other's."""
    given = os.environ.get("REDIS_URL")
    if given:
        yield _worker_database(given)
        return
    server = start_redis()
    try:
        yield server.url
    finally:
        server.stop()


def _worker_database(url: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # gw0, gw1, ...; unset when serial
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{base + int(worker.removeprefix('gw'))}"))


@pytest.fixture()
def redis_client(redis_url: str):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


@pytest.fixture(scope="session")
def engines() -> Iterator[dict[str, object]]:
    """Every installed game's engine, served in-process on a free port with metrics."""
    from services.engines.core.server import start_engine
    from services.engines.registry import available_games

    running = {g: start_engine(g, port=0, metrics_port=0) for g in available_games()}
    try:
        yield running
    finally:
        for engine in running.values():
            engine.stop(grace=1)


CHROMIUM = os.environ.get("CULTISTS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium (Debian's, never a Playwright download) for the whole run.

    Session-wide and in the root conftest because Playwright's sync API allows one instance
    per thread: a second `sync_playwright()` while another is open fails ("Sync API inside
    the asyncio loop"), so every suite that drives a browser opens its contexts on this one.
    """
    if not Path(CHROMIUM).exists() and not shutil.which(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (make install adds Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


# The longest files go first: parallel workers take whole files in collection order, so a
# long file that came last would run alone while the other workers sit idle.
LONGEST_FIRST = (
    "tests/deploy/test_images.py",
    "tests/deploy/test_stack.py",
    "tests/deploy/test_chaos.py",
    "tests/gateway/test_generated_clients.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its order
