"""Issue 31, item 6: /ops passes axe-core with its panels filled in. A real Prometheus
(installed by deploy/system-packages.sh, configured as `cultists run` does) scrapes the
test's engines, which have played real moves, so the page's charts, legends and alert list
are drawn from real series before axe looks; test_a11y.py checks the page without data."""

from __future__ import annotations

import pytest

from tests.gateway.test_ops_dashboards import _play, dead_target, ops_app, prometheus  # noqa: F401 - fixtures

from .support import sign_in_as
from .test_a11y import SIZES, _page_checks

DRAWN = """() => {
  const panels = [...document.querySelectorAll('.ops-panel[data-state]')];
  return panels.length > 0 && panels.some((p) => p.dataset.state === 'ok');
}"""


@pytest.fixture()
def app(ops_app):  # noqa: F811 - the browser server serves this app: the dashboards test's own
    return ops_app


@pytest.mark.parametrize("size", sorted(SIZES))
def test_ops_with_real_metrics_passes_axe(size, app, new_context, redis_client):
    _play(app)  # real Apply calls: the engines' histograms have samples to scrape
    page = new_context(viewport=SIZES[size]).new_page()
    sign_in_as(page, redis_client, "operator")
    page.goto("/ops")
    # Prometheus scrapes every second; the page asks again at "Refresh now" until drawn.
    for _ in range(60):
        if page.evaluate(DRAWN):
            break
        page.get_by_test_id("ops-reload").click()
        page.wait_for_timeout(1000)
    assert page.evaluate(DRAWN), "a panel drawn from real series"
    # A panel's state says ok as its data lands; its chart is drawn just after. 60 s: a
    # loaded 2-core machine, where the draw has been seen to trail the state.
    page.locator(".ops-panel svg, .ops-panel canvas").first.wait_for(timeout=60_000)
    drawn = page.locator(".ops-panel[data-state=ok]").count()
    assert drawn >= 1 and page.locator(".ops-panel svg, .ops-panel canvas").count() >= 1
    problems = _page_checks(page, f"/ops with {drawn} panels of data")
    assert not problems, "\n".join(problems)
