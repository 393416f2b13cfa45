"""Cross-site request forgery: a write from another site's page is refused (issue 27).

No credential of the API is a cookie (docs/security.md), so another site's page cannot
act *as* a player; but a plain form it posts needs no credential to take a free seat of an
unrated table, and a browser sends such a form (or a bodiless `fetch` with no custom
header) without asking. So every write (POST, PUT, PATCH, DELETE) a browser marks as
coming from another site is refused with 403 `cross_site`, before any handler runs:

- `Sec-Fetch-Site` (every current browser sends it): `same-origin` and `none` (typed,
  bookmarked) pass; `same-site` and `cross-site` pass only from an origin in
  `Settings.cors_origins` (GATEWAY_CORS_ORIGINS, the pages allowed to call the API);
- else `Origin` (older browsers send it on cross-origin writes): this gateway's own
  host, or one of those origins; `null` (a sandboxed frame, a `data:` page) never;
- a request with neither is not a browser's page (curl, the SDKs, the bench) and passes:
  it can only use credentials it holds, which a forging page does not have.

A request a cross-origin script sends with a token header (`Authorization`,
`X-Player-Token`, `X-Seat-Token`) needs a CORS preflight first, which only the configured
origins pass (cors.py): so it is covered by the same list.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, request

from services.platform.errors import PlatformError

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def install(app: Flask, allowed_origins: tuple[str, ...]) -> None:
    allowed = frozenset(o.rstrip("/") for o in allowed_origins)

    @app.before_request
    def _refuse_cross_site() -> None:
        if request.method not in WRITES:
            return
        origin = request.headers.get("Origin")
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None:
            if site in ("same-origin", "none") or (origin is not None and origin.rstrip("/") in allowed):
                return
            raise _refused(origin or site)
        if origin is None:
            return
        if origin.rstrip("/") in allowed or urlsplit(origin).netloc == request.host:
            return
        raise _refused(origin)


def _refused(origin: str) -> PlatformError:
    return PlatformError(
        403,
        "cross_site",
        f"a write from another site's page ({origin}) is refused; call the API from this site, "
        "a configured CORS origin, or a client that is not a browser page",
    )
