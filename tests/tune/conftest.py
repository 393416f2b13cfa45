"""Tune fixtures: the planted game registered for in-process runs, and a real sweeps worker."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from services.engines import registry
from tests.support.celery_worker import start_worker, stop_worker


@pytest.fixture()
def planted(monkeypatch: pytest.MonkeyPatch) -> str:
    """The planted game (tests/support/planted_game.py) installed for this test, in this process.

    Only an in-process run (`LocalRunner(1)`) sees it: pool processes and Celery workers
    import the real registry."""
    module = "tests.support.planted_game"
    monkeypatch.setitem(registry.GAMES, "planted", registry.Game(module, 0, 0, builtin=False))
    monkeypatch.setitem(registry.GAME_MODULES, "planted", module)
    return "planted"


@pytest.fixture(scope="module")
def tune_worker(redis_url: str) -> Iterator[subprocess.Popen]:
    """`celery worker -Q sweeps -c 2`: what plays a tune's evaluation sweeps."""
    proc = start_worker(redis_url, queues="sweeps", concurrency=2, name="tune")
    yield proc
    stop_worker(proc)
