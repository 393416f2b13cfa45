"""Fixtures that start real servers: Redis and gRPC engines, on free loopback ports."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from services.runtime.embedded_redis import start_redis


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """REDIS_URL if given (a database the tests may flush), else our own real redis-server."""
    given = os.environ.get("REDIS_URL")
    if given:
        yield given
        return
    server = start_redis()
    try:
        yield server.url
    finally:
        server.stop()


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
