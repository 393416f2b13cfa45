"""The platform as `make run` starts it, with its own Prometheus, seen as an operator sees it.

One `cultists run` on free ports for the whole module, because bringing the stack up is the
expensive part; the tests run in file order against it. `cultists status` says every part
is up, Prometheus among them; after bot games, a refused action, a matchmaking match and
two tiny nightly sweeps (`stack.play`), the run's Prometheus (Debian's binary, the
project's config and rules, targets rendered for this run's ports) has scraped every
service, and each dashboard query names a metric some service really exports. Then real
Chromium opens /ops: every panel shows data points, the Apply p99 the page draws is what
Prometheus's API answers for the same query, a per-game panel opens large, and an engine
stopped on purpose (SIGSTOP: it stays a child, so the run goes on) shows as a firing alert.
Screenshots at 1280x800 land in artifacts/screenshots/. Last, a Ctrl-C to the process
group leaves no process behind.

The run scrapes and evaluates rules every second and holds alerts for 2 s instead of
minutes (PROMETHEUS_* variables, see services/runtime/prometheus.py).
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.support import sign_in
from tests.deploy.stack import (
    GAMES,
    OPERATOR,
    Stack,
    alive,
    descendants,
    engine_pid,
    http,
    play,
    running_stack,
    wait,
)
from tests.deploy.test_configs import dashboard_metric_names, family

SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    assert shutil.which("prometheus"), "prometheus is not installed: `make install` installs it"
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running


@pytest.fixture(scope="module")
def played(stack: Stack) -> Stack:
    play(stack)
    return stack


@pytest.fixture(scope="module")
def page(played: Stack, browser):
    """One Chromium page at 1280x800 on /ops, refreshing every 5 s over the last 15 minutes."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(base_url=played.gateway, viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    tab = context.new_page()
    sign_in(tab, *OPERATOR)  # /ops's data is an operator's: the run's own (CULTISTS_OPERATOR)
    tab.goto("/ops?range=15m&refresh=5")
    yield tab
    context.close()


def test_status_reports_every_part_up_prometheus_included(stack: Stack):
    def ask() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "services.cli.main", "status"],
            env=stack.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    # Ports open before every worker answers (gunicorn's master binds first): ask until all do.
    try:
        status = wait(lambda: (done := ask()).returncode == 0 and done, 90, "every part up")
    except AssertionError:
        last = ask()
        raise AssertionError(last.stdout + last.stderr) from None
    assert status.stdout.count(" up ") >= 7
    prometheus_line = next(line for line in status.stdout.splitlines() if line.startswith("prometheus"))
    assert " up " in prometheus_line and stack.prometheus in prometheus_line
    assert stack.prometheus == f"http://127.0.0.1:{stack.ports['PROMETHEUS_PORT']}"
    # Its files live in the run's data folder.
    home = Path(stack.env["CULTISTS_DATA"]) / "prometheus"
    assert (home / "config" / "prometheus.yml").exists() and (home / "data").is_dir()


def test_prometheus_scrapes_every_service_of_the_run(played: Stack):
    def latency_for_all_games():
        found = {
            s["metric"]["game"]
            for s in played.series('game_method:cultists_engine_rpc_latency_seconds:p99{method="Apply"}')
        }
        return found >= set(GAMES)

    wait(latency_for_all_games, 90, "engine latency series for all three games in Prometheus")
    up = {s["metric"]["instance"]: s["value"][1] for s in played.series("up")}
    assert all(up.get(a) == "1" for a in played.scraped()), up

    # Every metric a dashboard queries is exported by some service of this very run.
    exported: set[str] = set()
    # The gateway's /metrics wants the token the run gave its Prometheus (docs/security.md).
    token_file = Path(played.env["CULTISTS_DATA"]) / "prometheus" / "config" / "gateway-metrics-token"
    scrape = {"Authorization": f"Bearer {token_file.read_text()}"}
    for address in played.scraped():
        request = urllib.request.Request(f"http://{address}/metrics", headers=scrape)
        body = urllib.request.urlopen(request, timeout=10).read().decode()
        exported |= {family(line.split()[2]) for line in body.splitlines() if line.startswith("# TYPE ")}
    missing = {n for n in dashboard_metric_names() if n != "up" and n not in exported}
    assert not missing, f"dashboards query metrics nobody exports: {sorted(missing)}"


EMPTY_PANELS = """() => [...document.querySelectorAll('.ops-panel[data-kind=timeseries]')]
  .filter(p => !(Number(p.dataset.points) > 0)).map(p => p.dataset.testid)"""

# The Apply p99 series of Crazy Cultists' latency panel as the page holds and draws it,
# with the points old enough that no rule evaluation can still land on them.
APPLY_P99 = """() => {
  const found = window.opsPanels && window.opsPanels['engine-latency:crazy_cultists'];
  if (!found) return null;
  const i = found.data.series.findIndex(s => s.name === 'Apply p99');
  if (i < 0) return null;
  const settled = found.data.end - 3;
  const drawn = found.chart.data[i + 1];
  if (!found.data.times.some((t, k) => t <= settled && drawn[k] != null)) return null;
  return {start: found.data.start, end: found.data.end, step: found.data.step, settled,
          query: found.data.queries[found.data.series[i].query], times: found.chart.data[0],
          drawn: Array.from(drawn), sent: found.data.series[i].values};
}"""


def test_every_panel_shows_data_and_apply_p99_is_prometheus_answer(played: Stack, page):
    try:
        page.wait_for_function(f"() => ({EMPTY_PANELS})().length === 0", timeout=120_000)
    except Exception:
        empty = page.evaluate(EMPTY_PANELS.replace(".map(p => p.dataset.testid)",
                                                   ".map(p => [p.dataset.testid, p.querySelector('.ops-state').textContent])"))  # fmt: skip
        page.screenshot(path=str(SCREENSHOTS / "ops-empty-panels.png"), full_page=True)
        raise AssertionError(f"panels without data points: {empty}") from None
    panels = page.locator(".ops-panel[data-kind=timeseries]")
    assert panels.count() >= 20
    page.screenshot(path=str(SCREENSHOTS / "ops-dashboards.png"))
    page.screenshot(path=str(SCREENSHOTS / "ops-dashboards-full.png"), full_page=True)

    page.wait_for_function(f"() => ({APPLY_P99})() !== null", timeout=60_000)
    shown = page.evaluate(APPLY_P99)
    assert shown["query"] == 'game_method:cultists_engine_rpc_latency_seconds:p99{game="crazy_cultists"}'
    assert shown["drawn"] == shown["sent"]  # the chart holds exactly what the gateway sent
    raw = http(f"{played.prometheus}/api/v1/query_range?" + urllib.parse.urlencode(
        {"query": shown["query"], "start": shown["start"], "end": shown["end"], "step": shown["step"]}
    ))["data"]["result"]  # fmt: skip
    (apply,) = [r for r in raw if r["metric"]["method"] == "Apply"]
    expected = {int(t): float(v) for t, v in apply["values"] if int(t) <= shown["settled"]}
    expected = {t: v for t, v in expected.items() if math.isfinite(v)}
    drawn = {
        t: v
        for t, v in zip(shown["times"], shown["drawn"], strict=True)
        if t <= shown["settled"] and v is not None
    }
    assert drawn and drawn == expected


def test_a_per_game_panel_opens_large_and_the_range_picker_changes_the_window(page):
    small = page.get_by_test_id("panel-engine-latency-trash_cult").locator("canvas").bounding_box()
    page.get_by_test_id("open-engine-latency-trash_cult").click()
    dialog = page.get_by_test_id("ops-large")
    dialog.locator("canvas").wait_for()
    large = dialog.locator("canvas").bounding_box()
    assert large["width"] > 1.5 * small["width"] and large["height"] > small["height"]
    assert "Trash Cult" in dialog.locator("h3").inner_text()
    page.screenshot(path=str(SCREENSHOTS / "ops-panel-large.png"))
    page.get_by_test_id("ops-large-close").click()
    assert not dialog.is_visible()

    page.get_by_test_id("ops-range").select_option("5m")
    assert "range=5m" in page.url
    page.wait_for_function(
        "() => window.opsPanels['moves'] && window.opsPanels['moves'].data.end - window.opsPanels['moves'].data.start === 300"
    )
    page.get_by_test_id("ops-range").select_option("15m")


def test_a_stopped_engine_shows_as_a_firing_alert(played: Stack, page):
    port = played.ports["ENGINE_METRICS_PORT_TRASH_CULT"]
    pid = engine_pid(played.run.pid, "trash_cult")
    alert = page.locator(
        f'[data-testid=alert][data-name=EngineDown][data-state=firing][data-instance="127.0.0.1:{port}"]'
    )
    os.kill(pid, signal.SIGSTOP)  # stopped, not dead: Prometheus's scrapes time out
    try:
        alert.wait_for(timeout=60_000)
        assert f"127.0.0.1:{port}" in alert.inner_text()
        assert int(page.get_by_test_id("panel-alerts").get_attribute("data-firing")) >= 1
        page.get_by_test_id("panel-alerts").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "ops-alert-engine-down.png"))
    finally:
        os.kill(pid, signal.SIGCONT)
    up = f'up{{instance="127.0.0.1:{port}"}}'
    wait(lambda: any(s["value"][1] == "1" for s in played.series(up)), 60, "the engine to be scraped again")
    alert.wait_for(state="detached", timeout=60_000)


def test_ctrl_c_stops_every_process_of_the_run(stack: Stack):
    run = stack.run
    processes = descendants(run.pid) | {run.pid}
    os.killpg(run.pid, signal.SIGINT)  # as a terminal sends it, to the process group
    assert run.wait(timeout=60) == 0
    wait(lambda: not any(alive(p) for p in processes), 30, "every process of the run to exit")
    log = stack.log.read_text()
    assert "platform is up" in log and "/ops" in log
