"""`POST /api/cards` on a bare Flask app with a real sweeps worker: refusals before any game,
the designer's quotas before any work, and an ablation's report once its sweep is done."""

from __future__ import annotations

import time

import pytest
import redis
from flask import Flask

from services.balance.sweeps import control
from services.balance.sweeps.store import INDEX
from services.gateway import cards_api, errors
from services.platform.quotas import DesignerQuotas
from tests.support.staff import act_as

from .support import wait_for

pytestmark = pytest.mark.usefixtures("sweep_worker")

SMALL = {
    "game": "trash_cult",
    "seed": 3,
    "games": 16,
    "chunk": 8,
    "players": [2],
    "max_turns": 60,
    "cards": ["Hide"],
    "changes": [1],
}


@pytest.fixture()
def client(redis_url):
    app = Flask(__name__)
    app.config["SWEEPS_REDIS_URL"] = redis_url
    app.extensions["cultists.quotas"] = DesignerQuotas(games_in_flight=200)
    app.register_blueprint(cards_api.bp)
    errors.register(app)
    return act_as(app.test_client(), redis.Redis.from_url(redis_url), "designer")


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({**SMALL, "cards": ["Hide", "Hyde"]}, 400, "invalid_spec", "cards.1"),  # an unknown card
        ({**SMALL, "changes": [3]}, 400, "malformed", "changes.0"),
        ({**SMALL, "cards": ["Hide"], "config": {"hides": 40}}, 400, "invalid_spec", "cards.0"),
        ({"game": "tricky_cultists", "games": 4}, 400, "invalid_spec", "game"),  # no card catalogue
        # 16 games x (base + 14 cards x 2 changes) = 464 games: past the quota of 200 in flight.
        ({**SMALL, "cards": None, "changes": None} | {"games": 16}, 429, "quota_exceeded", None),
    ],
)
def test_bad_ablations_are_refused_before_anything_is_queued(client, store, body, status, code, field):
    body = {k: v for k, v in body.items() if v is not None}
    queued, sweeps = store.r.llen(control.QUEUE), store.r.zcard(INDEX)
    resp = client.post("/api/cards", json=body)
    assert resp.status_code == status, resp.get_json()
    error = resp.get_json()["error"]
    assert error["code"] == code and error.get("field") == field
    assert (store.r.llen(control.QUEUE), store.r.zcard(INDEX)) == (queued, sweeps)


def test_an_ablation_runs_as_a_sweep_and_reports_its_cards(client, store):
    resp = client.post("/api/cards", json=SMALL)
    assert resp.status_code == 202, resp.get_json()
    body = resp.get_json()
    assert body["cells"] == 2 and body["variants"] == [{"card": "Hide", "change": 1, "count": 5}]
    wait_for(store, body["id"], timeout=180)
    deadline = time.monotonic() + 60
    while (got := client.get(body["links"]["progress"])).status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert got.status_code == 200
    # The Celery finish put the correlational card report in the sweep's summary too.
    card_report = store.summary(body["id"])["cards"]
    assert card_report["available"] and {r["card"] for r in card_report["rows"]} >= {"Hide"}
    report = got.get_json()["report"]
    assert report["available"] and report["ranking"][0]["card"] == "Hide"
    (pooled,) = [r for r in report["rows"] if r["table"] == "pooled"]
    assert pooled["effect"]["seeds"] == 16 and pooled["text"].startswith("Hide: +1 copy (4 -> 5)")
    assert client.get("/api/cards/0123456789abcdef").status_code == 404
