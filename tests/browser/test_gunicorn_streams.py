"""Issue 29 over the deployment's own server: a table page in real Chromium, served by
gunicorn with deploy/gunicorn.conf.py and two gevent workers (the pushed fan-out of
services/gateway/pushed_streams.py runs only there), hears a move another client made.

The page's stream and the move's POST may land on different workers: the move reaches the
page through the table's Redis channel and the receiving process's one subscription. The
page's own EventSource is watched (every `update` it was handed is recorded), so a panel
drawn by the page's safety refresh cannot pass for the stream.
"""

from __future__ import annotations

import json

import pytest

from tests.gateway.test_gunicorn import first_move, open_table, serve

from .conftest import DESKTOP

# Before any page script: every `update` event a page's EventSource hands over, in order.
RECORD_UPDATES = """(() => {
  const Native = window.EventSource;
  window.__updates = [];
  window.EventSource = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('update', (ev) => window.__updates.push(ev.data));
    }
  };
})();"""

SHOWS_VERSION = """(v) => {
  const p = document.querySelector('[data-testid=panel]');
  return !!p && p.dataset.busy !== '1' && Number(p.dataset.version) >= v;
}"""


@pytest.fixture()
def gunicorn_base(live_store, engines, tmp_path):
    with serve(live_store, engines, tmp_path) as (base, _):
        yield base


@pytest.fixture()
def gunicorn_context(browser, gunicorn_base):
    """Browser contexts on the gunicorn-served gateway, closed before it stops."""
    opened = []

    def open_context():
        context = browser.new_context(base_url=gunicorn_base, viewport=DESKTOP)
        context.set_default_timeout(30_000)
        context.add_init_script(RECORD_UPDATES)
        opened.append(context)
        return context

    yield open_context
    for context in opened:
        context.close()


def _versions(page) -> list[int]:
    return [json.loads(data).get("version", -1) for data in page.evaluate("window.__updates")]


def test_a_watching_page_hears_another_clients_moves_through_gunicorn(gunicorn_base, gunicorn_context):
    tid, tokens = open_table(gunicorn_base)
    # Two watchers on two connections of their own: with two workers, at least one of the
    # moves below is usually made on another worker than some page's stream.
    pages = [gunicorn_context().new_page() for _ in range(2)]
    streams = []
    for page in pages:
        with page.expect_response(lambda r: r.url.endswith(f"/api/tables/{tid}/events/stream")) as opened:
            page.goto(f"/tables/{tid}")
        streams.append(opened.value)
        page.wait_for_selector("[data-testid=panel][data-status=playing][data-version='0']")
        assert page.get_by_test_id("who-text").inner_text() == "Watching"
    for stream in streams:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("text/event-stream")

    for version in (1, 2):
        assert first_move(gunicorn_base, tid, tokens)["version"] == version  # made over urllib
        for page in pages:
            # 30 s: a loaded 2-core machine; the stream carries it in milliseconds when idle.
            page.wait_for_function(
                f"() => window.__updates.some((d) => JSON.parse(d).version === {version})", timeout=30_000
            )
            page.wait_for_function(SHOWS_VERSION, arg=version, timeout=30_000)
    for page in pages:
        assert _versions(page)[:2] == [1, 2], "each move's update, in order, none before it"
