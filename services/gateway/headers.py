"""Security headers on every response, by Flask-Talisman (issue 27, item 6).

- `Content-Security-Policy`: scripts, styles, fonts, frames and connections from this
  origin only (no inline script or style: the pages' scripts and styles are static
  files), images also as `data:` (the sweep report inlines its plots); no plugins;
  `frame-ancestors 'none'`, so no other site can frame a page (clickjacking), with
  `X-Frame-Options: DENY` for browsers that predate it; forms post only here.
- `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin` (a table's URL never
  leaks to another site), and `Strict-Transport-Security` on HTTPS requests.

HTTPS itself is the ingress's (the gateway is served behind one; `make run` and the tests
are plain HTTP on loopback), so Talisman does not redirect. The reports of sweeps and
tunes are whole documents written by the balance code with their own `<style>`:
`REPORT_POLICY` lets their inline styles through and still no script
(`@talisman(content_security_policy=REPORT_POLICY)` on those routes).
"""

from __future__ import annotations

from flask import Flask
from flask_talisman import Talisman

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": ["'self'", "data:"],
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
REPORT_POLICY = {**POLICY, "style-src": ["'self'", "'unsafe-inline'"]}

talisman = Talisman()


def install(app: Flask) -> None:
    talisman.init_app(
        app,
        force_https=False,
        content_security_policy=POLICY,
        frame_options="DENY",
        referrer_policy="same-origin",
        session_cookie_secure=False,  # the gateway sets no cookie
    )
