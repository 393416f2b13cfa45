"""POST /api/tunes on real Celery workers (a `tunes` driver worker and a `sweeps` worker):
refused specs name their field and leave nothing behind; a tune reports its progress,
ends with the same trials as `--local`, serves its report and plots; a driver whose worker
is killed mid-search is replaced and resumes without playing its games again."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import pytest
import redis
from flask import Flask

from services.balance.sweeps.store import SweepStore
from services.balance.tune.driver import QUEUE
from services.balance.tune.evaluate import LocalRunner
from services.balance.tune.run import run_tune
from services.balance.tune.spec import parse_tune_spec
from services.balance.tune.store import INDEX, TuneStore
from services.gateway import errors, sweeps_api, tunes_api
from tests.support.celery_worker import start_worker, stop_worker
from tests.support.staff import act_as
from tests.tune.specs import SMALL_CC_TUNE

SMALL = {"name": "api tune", **SMALL_CC_TUNE, "budget": 240}
DRIVER_ENV = {"TUNE_LEASE_SECONDS": "5", "TUNE_POLL_SECONDS": "0.1"}


@pytest.fixture(scope="module")
def sweeps_worker(redis_url: str) -> Iterator[subprocess.Popen]:
    proc = start_worker(redis_url, queues="sweeps", concurrency=2, name="tune-api-sweeps")
    yield proc
    stop_worker(proc)


@pytest.fixture()
def driver(redis_url: str, sweeps_worker) -> Iterator[subprocess.Popen]:
    """The `tunes` queue's worker, killed or stopped by the test or at its end."""
    proc = start_worker(redis_url, queues=QUEUE, concurrency=1, name="tune-api-driver", extra_env=DRIVER_ENV)
    yield proc
    stop_worker(proc, hard=True)


@pytest.fixture()
def client(redis_url: str):
    app = Flask(__name__)
    app.config["SWEEPS_REDIS_URL"] = redis_url
    app.register_blueprint(sweeps_api.bp)
    app.register_blueprint(tunes_api.bp)
    errors.register(app)
    # A designer's session: only designers submit and read tunes (test_roles.py).
    return act_as(app.test_client(), redis.Redis.from_url(redis_url), "designer")


@pytest.fixture()
def tunes(redis_url: str) -> Iterator[TuneStore]:
    store = TuneStore.from_url(redis_url)
    yield store
    store.r.close()


def _post(client, spec: dict):
    """The spec as JSON in its own key order (the test client's `json=` sorts keys, and the
    search space follows the order `search` lists its fields)."""
    return client.post("/api/tunes", data=json.dumps(spec), content_type="application/json")


def _wait_done(client, tune_id: str, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        body = client.get(f"/api/tunes/{tune_id}").get_json()
        seen.append(body["percent"])
        if body["status"] in ("done", "failed"):
            return {**body, "percents": seen}
        time.sleep(0.2)
    raise AssertionError(f"tune {tune_id} not done after {timeout} s: {body}")


@pytest.mark.parametrize(
    ("change", "code", "field", "words"),
    [
        ({"game": "chess"}, "malformed", "game", "'game': unknown game 'chess'"),
        (
            {"search": {"threshold": {"low": 2, "high": 9}}},
            "invalid_spec",
            "search.threshold",
            "candles_to_win",
        ),
        ({"search": {"threshold": {"low": 2}}}, "malformed", "search.threshold.high", "is required"),
        ({"search": {"threshold": "x"}}, "malformed", "search.threshold", "{low, high[, step]}"),
        (
            {"objectives": [{"metric": "seat_rate", "target": [0.6, 0.4]}]},
            "invalid_spec",
            "objectives.0",
            "target range",
        ),
        ({"objectives": [{"metric": "fun", "target": 1}]}, "malformed", "objectives.0.metric", "seat_rate"),
        ({"budget": 10}, "invalid_spec", "budget", "below one first look"),
        ({"racing": {"eta": 1}}, "malformed", "racing.eta", "greater than or equal to 2"),
        ({"lineups": ["wizard"]}, "invalid_spec", "lineups.0", "bad bot 'wizard'"),
        ({"colour": "red"}, "malformed", "colour", "'colour' is not a field here"),
    ],
)
def test_a_bad_spec_is_a_400_naming_its_field_and_queues_nothing(client, tunes, change, code, field, words):
    before = (tunes.r.zcard(INDEX), tunes.r.llen(QUEUE))
    resp = _post(client, {**SMALL, **change})
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert (error["code"], error["field"]) == (code, field) and words in error["message"]
    assert (tunes.r.zcard(INDEX), tunes.r.llen(QUEUE)) == before


def test_malformed_and_unknown(client):
    assert client.post("/api/tunes", data="game: x", content_type="text/yaml").status_code == 400
    assert client.get("/api/tunes/0123456789abcdef").status_code == 404
    assert client.get("/api/tunes/not-an-id/report").status_code == 404
    refused = client.get("/api/tunes?limit=x")
    assert refused.status_code == 400 and refused.get_json()["error"]["field"] == "limit"


def test_a_tune_runs_on_its_driver_worker_and_serves_its_report(client, driver, redis_url):
    resp = _post(client, SMALL)
    assert resp.status_code == 202
    queued = resp.get_json()
    assert (queued["status"], queued["budget"], queued["percent"]) == ("queued", 240, 0.0)
    done = _wait_done(client, queued["id"])
    assert done["status"] == "done" and done["percent"] == 100.0, done
    assert done["percents"] == sorted(done["percents"])  # progress only grows
    local = run_tune(parse_tune_spec(SMALL), LocalRunner(1), queued["id"])
    summary = done["summary"]
    assert summary["history"] == local["history"] and summary["best"] == local["best"]
    assert done["trials"] == local["trials"] and done["games_done"] == local["search_games"]
    assert done["verdict"] == local["best"]["confirmed"]["verdict"]
    assert done["confirm_games_done"] == done["confirm_games_total"] == local["confirm_games"]
    assert summary["run"]["drivers"] == 1 and summary["run"]["sweeps_reused"] == 0
    listed = client.get("/api/tunes?limit=5").get_json()["tunes"]
    assert queued["id"] in [t["id"] for t in listed]
    page = client.get(f"/api/tunes/{queued['id']}/report")
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert "plots/progress.png" in text and "Confirmation on fresh seeds" in text
    png = client.get(f"/api/tunes/{queued['id']}/plots/progress.png")
    assert png.status_code == 200 and png.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert client.get(f"/api/tunes/{queued['id']}/plots/nothing.png").status_code == 404
    # Its evaluations were sweeps like any other, each game counted once.
    sweeps = SweepStore.from_url(redis_url)
    played = sum(int(sweeps.meta(s)["games_done"]) for s in summary["run"]["sweeps"])
    assert played == summary["games"]
    sweeps.r.close()


def test_a_driver_killed_mid_search_is_replaced_and_resumes(client, driver, tunes, redis_url):
    from workers.app import app
    from workers.tune.tasks import reconcile

    app.conf.broker_url = app.conf.result_backend = redis_url
    app.set_current()  # reconcile() runs here, on current_app: not an app an earlier test made current
    # Wide enough that the driver is killed with most of the search ahead of it.
    spec = {**SMALL, "name": "killed driver", "budget": 600, "seed": 9}
    tune_id = _post(client, spec).get_json()["id"]
    deadline = time.monotonic() + 120
    while int(tunes.meta(tune_id).get("spent", 0)) == 0:
        assert time.monotonic() < deadline, tunes.meta(tune_id)
        time.sleep(0.05)
    stop_worker(driver, hard=True)  # the driver dies with its worker; its sweeps play on
    at_kill = client.get(f"/api/tunes/{tune_id}").get_json()["percent"]
    assert tunes.status(tune_id) == "running"
    replacement = start_worker(
        redis_url, queues=QUEUE, concurrency=1, name="tune-api-driver2", extra_env=DRIVER_ENV
    )
    try:
        deadline = time.monotonic() + 30
        while tunes.has_driver(tune_id):  # the dead driver's lease runs out (5 s here)
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert reconcile() == {"requeued": [tune_id]}
        assert reconcile() == {"requeued": []}  # queued once, not again on every pass
        done = _wait_done(client, tune_id)
    finally:
        stop_worker(replacement, hard=True)
    assert done["status"] == "done", done
    # The replacement replays from the start, but the percentage never runs backwards.
    assert at_kill > 0 and min(done["percents"]) >= at_kill
    assert done["percents"] == sorted(done["percents"])
    local = run_tune(parse_tune_spec(spec), LocalRunner(1), tune_id)
    summary = done["summary"]
    assert summary["history"] == local["history"] and summary["best"] == local["best"]
    assert summary["run"]["drivers"] == 2 and summary["run"]["sweeps_reused"] >= 1
    # The replay read the dead driver's evaluations: no evaluation was played twice.
    sweeps = SweepStore.from_url(redis_url)
    played = sum(int(sweeps.meta(s)["games_done"]) for s in set(summary["run"]["sweeps"]))
    assert played == summary["games"]
    sweeps.r.close()


def test_a_cancelled_tune_stops_its_driver_and_its_sweeps(client, driver, tunes, redis_url):
    spec = {
        **SMALL,
        "name": "cancelled",
        "budget": 5000,
        "seed": 13,
        "racing": {"games": 200, "eta": 2, "rungs": 2, "batch": 4},
    }
    tune_id = _post(client, spec).get_json()["id"]
    deadline = time.monotonic() + 120
    while not tunes.sweep_ids(tune_id):
        assert time.monotonic() < deadline, tunes.meta(tune_id)
        time.sleep(0.05)
    resp = client.post(f"/api/tunes/{tune_id}/cancel")
    assert resp.status_code == 200 and resp.get_json()["status"] == "cancelled"
    assert client.post(f"/api/tunes/{tune_id}/cancel").status_code == 409
    assert client.get(f"/api/tunes/{tune_id}/report").status_code == 409
    deadline = time.monotonic() + 60
    while tunes.has_driver(tune_id):  # the driver saw it and let go of the tune
        assert time.monotonic() < deadline
        time.sleep(0.1)
    sweeps = SweepStore.from_url(redis_url)
    assert {sweeps.status(s) for s in tunes.sweep_ids(tune_id)} <= {"cancelled", "done"}
    sweeps.r.close()
    body = client.get(f"/api/tunes/{tune_id}").get_json()
    assert body["status"] == "cancelled" and "summary" not in body and tune_id not in tunes.active_ids()
