"""A tune's evaluations are sweeps on Celery: a real worker on real Redis gives the same
trials, best config and confirmation as `--local`."""

from __future__ import annotations

import pytest

from services.balance.sweeps.store import INDEX, SweepStore
from services.balance.tune.evaluate import CeleryRunner, LocalRunner
from services.balance.tune.run import run_tune
from services.balance.tune.spec import parse_tune_spec
from tests.tune.specs import SMALL_CC_TUNE

pytestmark = pytest.mark.usefixtures("tune_worker")

SMALL = SMALL_CC_TUNE


def test_a_tune_on_celery_plays_sweeps_and_matches_local(redis_url):
    from workers.app import app

    app.conf.broker_url = app.conf.result_backend = redis_url
    store = SweepStore.from_url(redis_url)
    before = store.r.zcard(INDEX)
    spec = parse_tune_spec(SMALL)
    runner = CeleryRunner(store, app, poll=0.05, timeout=120)
    on_celery = run_tune(spec, runner, "t", mode="celery")
    local = run_tune(spec, LocalRunner(1), "t")
    assert on_celery["history"] == local["history"]
    assert on_celery["best"] == local["best"]
    assert on_celery["games"] == local["games"] and on_celery["search_games"] <= spec.budget
    # Every evaluation (and the confirmation) was a sweep of its own, each game counted once.
    assert store.r.zcard(INDEX) - before == len(runner.sweep_ids) >= 2
    played = sum(int(store.meta(s)["games_done"]) for s in runner.sweep_ids)
    assert played == on_celery["games"]
    store.r.close()
