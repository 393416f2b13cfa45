"""Another site in Chromium (issue 27, item 6): a page served from a second local server,
on another origin (`localhost` and another port, so another site), posts a form and a
bodiless `fetch` to the gateway and tries to frame a table page. The writes are refused
(403 `cross_site`, the seat stays free) and the frame stays empty (`frame-ancestors
'none'`), while the same page frames a page of its own without trouble (the control)."""

from __future__ import annotations

import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PAGES: dict[str, str] = {}


class _OtherSite(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = PAGES.get(self.path, "<p>own page of the other site</p>").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture()
def other_site() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _OtherSite)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://localhost:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def _api(base: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Content-Type": "application/json"},
        method="POST" if body is not None else "GET",
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        return json.loads(reply.read())


def _claimed(base: str, tid: str) -> list[bool]:
    return [s["claimed"] for s in _api(base, f"/api/tables/{tid}")["seats"]]


def test_another_sites_form_and_fetch_take_no_seat(new_context, server, other_site):
    tid = _api(server, "/api/tables", {"game": "trash_cult", "players": 2})["table"]
    PAGES["/forge"] = (
        f'<form id="forge" method="post" action="{server}/api/tables/{tid}/seats/0">'
        '<input name="player" value="mallory"><button id="go">take it</button></form>'
    )
    page = new_context().new_page()
    page.goto(f"{other_site}/forge")
    with page.expect_response(f"{server}/api/tables/{tid}/seats/0") as answer:
        page.click("#go")
    assert answer.value.status == 403
    assert json.loads(answer.value.text())["error"]["code"] == "cross_site"
    # A bodiless fetch that does not wait to read the answer (no-cors): sent all the same.
    page.goto(f"{other_site}/forge")
    with page.expect_response(f"{server}/api/tables/{tid}/seats/1") as sent:
        page.evaluate(f"fetch('{server}/api/tables/{tid}/seats/1', {{method: 'POST', mode: 'no-cors'}})")
    assert sent.value.status == 403
    assert _claimed(server, tid) == [False, False]


def test_a_table_page_cannot_be_framed_by_another_site(new_context, server, other_site):
    tid = _api(server, "/api/tables", {"game": "trash_cult", "players": 2})["table"]
    PAGES["/frame"] = (
        f'<iframe id="theirs" src="{server}/tables/{tid}" width="600" height="400"></iframe>'
        f'<iframe id="own" src="{other_site}/own" width="200" height="100"></iframe>'
    )
    page = new_context().new_page()
    refusals: list[str] = []
    page.on("console", lambda message: refusals.append(message.text))
    with page.expect_response(f"{server}/tables/{tid}") as framed:
        page.goto(f"{other_site}/frame")
    assert "frame-ancestors 'none'" in framed.value.headers["content-security-policy"]
    page.wait_for_load_state("load")
    own = page.frame_locator("#own").locator("p")
    assert own.inner_text() == "own page of the other site"  # framing as such works here
    theirs = page.frame(url=f"{server}/tables/{tid}")
    assert theirs is None or theirs.locator("[data-testid=table-page]").count() == 0
    page.wait_for_function("() => true")  # let the console catch up
    assert any("frame-ancestors" in text for text in refusals), refusals


def test_the_pages_run_under_their_policy_without_a_violation(new_context, server):
    """Every page's scripts and styles are files of this origin: the browser reports no
    violation of the CSP on any of them (a listener from before any page script runs)."""
    tid = _api(server, "/api/tables", {"game": "crazy_cultists", "players": 3})["table"]
    context = new_context()
    context.add_init_script(
        "window.__violations = [];"
        "document.addEventListener('securitypolicyviolation',"
        " (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));"
    )
    page = context.new_page()
    for path in ("/", "/account", "/designer", "/ops", "/replays", f"/tables/{tid}"):
        page.goto(path)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__violations") == [], path
    # The control: markup with an inline style is a violation the listener does report.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<div style=\"color: red\">x</div>')")
    page.wait_for_function("() => window.__violations.length > 0")
