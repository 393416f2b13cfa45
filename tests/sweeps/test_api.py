"""The sweeps blueprint on a bare Flask app: submit, progress, cancel, result, report, replay."""

from __future__ import annotations

import re
import time

import pytest
import redis
from flask import Flask

from services.balance.sweeps import control
from services.balance.sweeps.spec import SpecError, load_spec_file
from services.balance.sweeps.store import INDEX, new_id
from services.gateway import errors, sweeps_api
from tests.support.staff import act_as

from .support import SMALL_SPECS, wait_for

pytestmark = pytest.mark.usefixtures("sweep_worker")


@pytest.fixture()
def client(redis_url):
    app = Flask(__name__)
    app.config["SWEEPS_REDIS_URL"] = redis_url
    app.register_blueprint(sweeps_api.bp)
    errors.register(app)  # the gateway's error answers, as create_app installs them
    # A designer's session: only designers submit and read sweeps (test_roles.py).
    return act_as(app.test_client(), redis.Redis.from_url(redis_url), "designer")


@pytest.mark.parametrize(
    ("body", "code", "field", "message"),
    [
        ({"game": "chess", "games": 5}, "malformed", "game", "'game': unknown game 'chess'"),
        ({"game": "trash_cult", "games": 0}, "malformed", "games", "'games': input should be greater than"),
        (
            {"game": "trash_cult", "games": "5"},
            "malformed",
            "games",
            "'games': input should be a valid integer",
        ),
        ({"game": "trash_cult", "gmes": 5, "games": 5}, "malformed", "gmes", "'gmes' is not a field here"),
        ({"game": "trash_cult", "games": 5, "lineups": [7]}, "malformed", "lineups.0", "a bot name, a list"),
        ({"game": "trash_cult", "games": 5, "players": [2, "3"]}, "malformed", "players.1", "valid integer"),
        (
            {"game": "trash_cult", "games": 5, "grid": {"variant": []}},
            "malformed",
            "grid.variant",
            "at least 1",
        ),
        ({"game": "trash_cult", "games": 5, "players": 9}, "invalid_spec", "players", "takes 2-4 players"),
        (
            {"game": "trash_cult", "games": 5, "config": {"raccoonz": 3}},
            "invalid_spec",
            None,
            "unknown config field(s) raccoonz",
        ),
        (
            {"game": "trash_cult", "games": 5, "lineups": [["random", "wizard"]], "players": [2]},
            "invalid_spec",
            "lineups.0",
            "bad bot 'wizard'",
        ),
        (  # a plan that would hold the request for hours: refused before it is built
            {"game": "trash_cult", "games": 50_000_000, "chunk": 1, "players": [2]},
            "invalid_spec",
            "chunk",
            "queues at most 5000",
        ),
    ],
)
def test_invalid_specs_are_refused_before_anything_is_queued(client, store, body, code, field, message):
    """The body's shape is the spec model's (400 malformed naming the field, as every body);
    what a shape cannot say is the spec parser's (invalid_spec, the field when one is at fault)."""
    queued, sweeps = store.r.llen(control.QUEUE), store.r.zcard(INDEX)
    resp = client.post("/api/sweeps", json=body)
    assert resp.status_code == 400
    error = resp.get_json()["error"]
    assert (error["code"], error.get("field")) == (code, field) and message in error["message"]
    assert (store.r.llen(control.QUEUE), store.r.zcard(INDEX)) == (queued, sweeps)


def test_the_cli_parser_refuses_with_the_same_words(tmp_path):
    """A spec file goes through the same model: the CLI's refusal is the API's message."""
    path = tmp_path / "spec.yaml"
    path.write_text("game: trash_cult\ngames: 5\nplayers: [2, '3']\n")
    with pytest.raises(SpecError) as refused:
        load_spec_file(path)
    assert (refused.value.field, str(refused.value)) == (
        "players.1",
        "'players.1': input should be a valid integer",
    )


def test_malformed_body(client):
    refused = client.post("/api/sweeps", data="game: x", content_type="text/yaml")
    assert refused.status_code == 400 and refused.get_json()["error"]["code"] == "malformed"
    assert client.post("/api/sweeps", data="[1", content_type="application/json").status_code == 400
    assert (
        client.post("/api/sweeps", json=[1]).get_json()["error"]["message"]
        == "the body must be a JSON object"
    )
    for limit in ("x", "0", "101"):
        refused = client.get(f"/api/sweeps?limit={limit}")
        assert refused.status_code == 400 and refused.get_json()["error"]["field"] == "limit"
    assert client.get("/api/sweeps/0123456789abcdef").status_code == 404
    assert client.get("/api/sweeps/not-an-id/result").status_code == 404


def test_submit_progress_result_report_and_replay(client, store):
    resp = client.post("/api/sweeps", json=SMALL_SPECS["tricky_cultists"])
    assert resp.status_code == 202
    body = resp.get_json()
    sweep_id = body["id"]
    assert body["total_games"] == 80 and body["cells"] == 2 and body["links"]["result"].endswith("/result")
    # the result is 202 with progress until the sweep is done
    early = client.get(f"/api/sweeps/{sweep_id}/result")
    assert early.status_code in (200, 202)
    wait_for(store, sweep_id)
    progress = client.get(f"/api/sweeps/{sweep_id}").get_json()
    assert (progress["status"], progress["percent"], progress["games_done"]) == ("done", 100.0, 80)
    result = client.get(f"/api/sweeps/{sweep_id}/result")
    assert result.status_code == 200
    assert result.get_json()["aggregates"]["games_counted"] == 80
    report = client.get(f"/api/sweeps/{sweep_id}/report")
    assert report.status_code == 200 and report.mimetype == "text/html"
    page = report.get_data(as_text=True)
    assert "data:image/png;base64," in page and f"/api/sweeps/{sweep_id}/replays/cell-0.json" in page
    record = client.get(f"/api/sweeps/{sweep_id}/replays/cell-0.json").get_json()
    assert record["game"] == "tricky_cultists" and record["actions"]
    listing = client.get("/api/sweeps?limit=5").get_json()["sweeps"]
    assert sweep_id in [s["id"] for s in listing]
    assert client.post(f"/api/sweeps/{sweep_id}/cancel").status_code == 409


def test_cancel_stops_a_running_sweep(client, store):
    big = {**SMALL_SPECS["trash_cult"], "games": 400, "chunk": 10, "max_turns": 300}
    sweep_id = client.post("/api/sweeps", json=big).get_json()["id"]
    resp = client.post(f"/api/sweeps/{sweep_id}/cancel")
    assert resp.status_code == 200 and resp.get_json()["status"] == "cancelled"
    done_then = int(store.meta(sweep_id)["games_done"])
    # queued chunks are skipped: the queue drains quickly and nothing more is counted
    deadline = time.monotonic() + 60
    while store.r.llen(control.QUEUE):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(0.5)
    assert int(store.meta(sweep_id)["games_done"]) <= done_then + 2 * 10  # at most the chunks in flight
    assert client.get(f"/api/sweeps/{sweep_id}/result").status_code == 409


def test_openapi_paths_cover_every_route():
    app = Flask(__name__)
    app.register_blueprint(sweeps_api.bp)
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/api/"):
            path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
            assert path in sweeps_api.OPENAPI_PATHS, path
            for method in rule.methods - {"HEAD", "OPTIONS"}:
                assert method.lower() in sweeps_api.OPENAPI_PATHS[path]


def test_a_chunk_that_cannot_run_fails_the_sweep_with_its_reason(client, store, celery_app):
    # A spec that passed another process's checks but that this worker cannot plan
    # (say, a game its checkout lacks): the sweep fails loudly instead of hanging.
    sweep_id = new_id()
    store.create(sweep_id, {"game": "chess", "games": 5}, 5, 1)
    celery_app.send_task(control.CHUNK_TASK, args=[sweep_id, "0-0"], queue=control.QUEUE)
    assert wait_for(store, sweep_id, timeout=30) == "failed"
    progress = client.get(f"/api/sweeps/{sweep_id}").get_json()
    assert progress["chunks_failed"] == 1 and "unknown game 'chess'" in progress["error"]
    resp = client.get(f"/api/sweeps/{sweep_id}/result")
    assert resp.status_code == 409 and resp.get_json()["error"]["code"] == "failed"
