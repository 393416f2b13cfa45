"""/ops's data endpoints against a real Prometheus scraping the real in-process engines.

Prometheus is Debian's binary with the project's own config and rules (rendered by
services/runtime/prometheus.py, as `cultists run` does), scraping every second. The checks:
a panel answers exactly what Prometheus answers for that panel's query; only the panel
list's queries can be asked (unknown panels, games and ranges are refused, and nothing
else in the URL reaches Prometheus); many simultaneous viewers cost Prometheus one query;
an engine that cannot be scraped is an alert on /ops/data/alerts; without Prometheus the
page says so.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.dashboards.panels import DASHBOARDS, expand, panels
from services.dashboards.prometheus_api import Window, legend
from services.gateway import create_app
from services.gateway.ops_dashboards import CACHE_PREFIX
from services.platform.settings import Settings
from services.runtime.ports import free_port
from services.runtime.prometheus import render
from tests.support.staff import act_as

from .support import two_player_config

STATIC = Path(__file__).resolve().parents[2] / "services" / "gateway" / "static" / "ops"


def _operator(app):
    """A client of `app` signed in as an operator: /ops's data is theirs (test_roles.py)."""
    return act_as(app.test_client(), app.extensions["cultists"].redis, "operator")


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def dead_target() -> str:
    """A metrics address nothing listens on: an engine that is down, to Prometheus."""
    return f"127.0.0.1:{free_port()}"


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory, engines: dict, dead_target: str) -> Iterator[str]:
    binary = shutil.which("prometheus")
    assert binary, "prometheus is not installed: `make install` (deploy/system-packages.sh) installs it"
    home = tmp_path_factory.mktemp("prometheus")
    # The in-process engines share one registry: one of their ports exports all three games.
    metrics = next(iter(engines.values())).metrics_port
    targets = {"engines": [{"targets": [f"127.0.0.1:{metrics}", dead_target]}], "gateway": [], "workers": []}
    config = render(home / "config", targets, scrape_interval="1s", evaluation_interval="1s", alert_for="1s")
    port = free_port()
    proc = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={home / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"

    def ready() -> bool:
        try:
            return urllib.request.urlopen(f"{url}/-/ready", timeout=2).status == 200
        except OSError:
            return False

    try:
        _wait(ready, 60, "Prometheus to be ready")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture()
def ops_app(gateway_settings: Settings, prometheus: str):
    app = create_app(dataclasses.replace(gateway_settings, prometheus_url=prometheus))
    gw = app.extensions["cultists"]
    for key in gw.redis.scan_iter(f"{CACHE_PREFIX}*"):
        gw.redis.delete(key)
    yield app
    gw.close()


def _play(app, game: str = "crazy_cultists", moves: int = 20) -> None:
    """Real Apply calls on the real engine, so its latency histogram has samples."""
    engines = app.extensions["cultists"].engines
    made, seed = 0, 1
    while made < moves:
        step = engines.new_game(game, two_player_config(game), 2, seed)
        while not step.terminal and made < moves:
            seat = step.to_act[0]
            action = engines.suggest(game, step.state, seat, "random", seed + made)
            step = engines.apply(game, step.state, seat, action.id)
            made += 1
        seed += 1


def _query_range_count(prometheus: str) -> float:
    """Prometheus's own count of range queries it has answered, once it stops moving.

    Prometheus counts a request after its answer is written, so a reply already read (an
    earlier test's) can still be uncounted for a moment on a loaded machine: read until two
    readings a little apart agree."""

    def read() -> float:
        body = urllib.request.urlopen(f"{prometheus}/metrics", timeout=10).read().decode()
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in body.splitlines()
            if line.startswith("prometheus_http_requests_total{") and 'handler="/api/v1/query_range"' in line
        )

    last = read()
    for _ in range(50):
        time.sleep(0.2)
        now = read()
        if now == last:
            return now
        last = now
    raise AssertionError("Prometheus's count of range queries kept moving for 10 s")


def test_a_panel_answers_what_prometheus_answers_for_its_query(ops_app, prometheus):
    client = _operator(ops_app)
    url = "/ops/data/panels/engine-latency?range=5m&game=crazy_cultists"

    def apply_p99():
        # Moves between scrapes: a rate needs the counters to grow while Prometheus watches.
        _play(ops_app, moves=5)
        for key in ops_app.extensions["cultists"].redis.scan_iter(f"{CACHE_PREFIX}*"):
            ops_app.extensions["cultists"].redis.delete(key)
        body = client.get(url).get_json()
        settled = body["end"] - 3  # a rule evaluated in the last instants may land after our query
        found = [
            s for s in body["series"]
            if s["name"] == "Apply p99"
            and any(v is not None for t, v in zip(body["times"], s["values"], strict=True) if t <= settled)
        ]  # fmt: skip
        return (body, found[0]) if found else None

    body, series = _wait(apply_p99, 60, "the Apply p99 series of crazy_cultists")
    expr = expand(panels()["engine-latency"].queries[2].expr, "crazy_cultists")
    assert (
        body["queries"][2]
        == expr
        == ('game_method:cultists_engine_rpc_latency_seconds:p99{game="crazy_cultists"}')
    )
    assert body["times"] == list(range(body["start"], body["end"] + 1, body["step"]))
    raw = _get(f"{prometheus}/api/v1/query_range?" + urllib.parse.urlencode(
        {"query": expr, "start": body["start"], "end": body["end"], "step": body["step"]}
    ))["data"]["result"]  # fmt: skip
    direct = next(r for r in raw if r["metric"].get("method") == "Apply")
    settled = body["end"] - 3
    expected = {int(t): float(v) for t, v in direct["values"] if int(t) <= settled and v != "NaN"}
    drawn = {
        t: v for t, v in zip(body["times"], series["values"], strict=True) if t <= settled and v is not None
    }
    assert drawn and drawn == expected


def test_only_the_panel_lists_queries_can_be_asked(ops_app, prometheus):
    client = _operator(ops_app)
    before = _query_range_count(prometheus)
    refused = {
        "/ops/data/panels/no-such-panel": 404,
        "/ops/data/panels/alerts": 404,  # not a time series
        "/ops/data/panels/moves?range=13m": 400,
        "/ops/data/panels/moves?game=crazy_cultists": 400,  # not a per-game panel
        "/ops/data/panels/engine-latency": 400,  # per game: a game is needed
        '/ops/data/panels/engine-latency?game=crazy_cultists"}+or+vector(1)': 400,
        "/ops/data/panels/engine-latency?game=chess": 400,
    }
    for url, status in refused.items():
        reply = client.get(url)
        assert reply.status_code == status, url
        assert reply.get_json()["error"]["message"], url
    assert _query_range_count(prometheus) == before  # none of them reached Prometheus
    # Anything else in the URL is ignored: the panel's own query is what runs.
    body = client.get("/ops/data/panels/moves?range=5m&query=up&expr=up").get_json()
    assert body["queries"] == ["game:cultists_engine_moves:rate1m"]


def test_many_viewers_cost_prometheus_one_query(ops_app, prometheus):
    """Eight viewers at once, on separate connections: one asks Prometheus, seven wait for
    its answer in the shared cache (the 24h range's end moves only every 288 s)."""
    before = _query_range_count(prometheus)
    answers: list[dict] = []

    def viewer() -> None:
        answers.append(_operator(ops_app).get("/ops/data/panels/workers-up?range=24h").get_json())

    threads = [threading.Thread(target=viewer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(answers) == 8
    windows = {(a["start"], a["end"], a["step"]) for a in answers}
    assert _query_range_count(prometheus) - before == len(windows)  # one per window: normally 1
    # After the cache's few seconds, the next viewer asks again.
    time.sleep(ops_app.extensions["cultists"].settings.dashboards_cache_seconds + 0.5)
    _operator(ops_app).get("/ops/data/panels/workers-up?range=24h")
    assert _query_range_count(prometheus) - before == len(windows) + 1


def test_an_engine_that_cannot_be_scraped_is_an_alert(ops_app, dead_target):
    client = _operator(ops_app)

    def engine_down():
        for key in ops_app.extensions["cultists"].redis.scan_iter(f"{CACHE_PREFIX}*"):
            ops_app.extensions["cultists"].redis.delete(key)
        alerts = client.get("/ops/data/alerts").get_json()["alerts"]
        return [a for a in alerts if a["name"] == "EngineDown" and a["state"] == "firing"]

    (alert,) = _wait(engine_down, 60, "EngineDown to fire")
    assert alert["labels"]["instance"] == dead_target
    assert alert["severity"] == "page" and dead_target in alert["summary"]


def test_without_prometheus_the_page_says_so(gateway_settings: Settings):
    app = create_app(dataclasses.replace(gateway_settings, prometheus_url=None))
    try:
        client = _operator(app)
        page = client.get("/ops")
        assert page.status_code == 200 and b'data-testid="ops-no-prometheus"' in page.data
        reply = client.get("/ops/data/panels/moves?range=1h")
        assert reply.status_code == 503 and reply.get_json()["error"]["code"] == "no_prometheus"
    finally:
        app.extensions["cultists"].close()


def test_unreachable_prometheus_is_a_clear_error(gateway_settings: Settings):
    app = create_app(dataclasses.replace(gateway_settings, prometheus_url=f"http://127.0.0.1:{free_port()}"))
    try:
        reply = _operator(app).get("/ops/data/alerts")
        assert reply.status_code == 502
        assert reply.get_json()["error"]["code"] == "prometheus_unavailable"
        assert "did not answer" in reply.get_json()["error"]["message"]
    finally:
        app.extensions["cultists"].close()


def test_the_page_has_every_panel_of_the_list_once_per_game_where_per_game(ops_app):
    page = _operator(ops_app).get("/ops").data.decode()
    games = ops_app.extensions["cultists"].engines.games
    ids = [p.id for board in DASHBOARDS for p in board.panels]
    assert len(ids) == len(set(ids))
    for board in DASHBOARDS:
        for p in board.panels:
            expected = [f"panel-{p.id}-{g}" for g in games] if p.per_game else [f"panel-{p.id}"]
            for testid in expected:
                assert page.count(f'data-testid="{testid}"') == 1, testid


def test_the_docs_tour_every_panel():
    tour = (Path(__file__).resolve().parents[2] / "docs" / "dashboards.md").read_text()
    missing = [p.id for p in panels().values() if f"(`{p.id}`" not in tour]
    assert not missing, f"docs/dashboards.md says nothing about {missing}"


def test_vendored_uplot_is_the_version_its_note_records():
    header = (STATIC / "vendor/uplot/uPlot.iife.min.js").read_text()[:200]
    version = re.search(r"uPlot \(v([\d.]+)\)", header).group(1)
    note = (STATIC / "vendor/uplot/README.md").read_text()
    assert f"version **{version}**" in note and "MIT" in note
    assert "MIT License" in (STATIC / "vendor/uplot/LICENSE").read_text()


def test_windows_end_on_their_step_so_viewers_share_them():
    """Every viewer asking within one step gets the very same window (and cache key)."""
    a, b = Window.ending(999_996.2, 3600, 300), Window.ending(1_000_007.9, 3600, 300)
    assert a == b and a.step == 12 and a.end % 12 == 0 and a.end - a.start == 3600
    assert len(a.times()) == 301 and Window.ending(1_000_008.0, 3600, 300) != a
    assert Window.ending(50.5, 300, 300) == Window(-250, 50, 1)


def test_legends_fill_labels_like_grafana():
    assert (
        legend("{{game}} {{method}} p99", {"game": "trash_cult", "method": "Apply"}) == "trash_cult Apply p99"
    )
    assert legend("{{ queue }}", {"queue": "sweeps"}) == "sweeps"
    assert legend("{{game}} {{missing}}", {"game": "x"}) == "x"
    assert legend("{{missing}}", {}) == "value"


def test_every_page_links_the_dashboards(client):
    """The site navigation offers /ops, so an operator finds it from the lobby."""
    lobby = client.get("/").get_data(as_text=True)
    assert 'href="/ops"' in lobby and "Dashboards" in lobby
