"""The API's version in its paths: `/api/v1/...` is the API; `/api/...` is its alias.

One set of routes serves both: a request for `/api/v1/<rest>` is handed to the app as
`/api/<rest>` (before Flask routes it), with the version it asked for kept in the WSGI
environ. So the rate limits, the guards, the metrics' route labels and every handler see
one path per operation, and the unversioned paths the project's own pages call keep
working without a second copy of anything. The document (`/api/v1/openapi.json`) lists
only the versioned paths: they are what a client outside this project is written
against, and what the deprecation policy (docs/client-guide.md) promises about.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flask import Response, jsonify

VERSION = "v1"
PREFIX = f"/api/{VERSION}"
ALIAS = "/api"
ENVIRON_KEY = "cultists.api_version"

StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


def versioned(wsgi_app: WSGIApp) -> WSGIApp:
    """`wsgi_app` answering `/api/v1/...` as `/api/...` (the version noted in the environ)."""
    cut = len(PREFIX)

    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path.startswith(PREFIX) and (len(path) == cut or path[cut] == "/"):
            environ["PATH_INFO"] = ALIAS + path[cut:]
            environ[ENVIRON_KEY] = VERSION
        return wsgi_app(environ, start_response)

    return app


def documented_path(path: str) -> str:
    """A route's path as the document lists it: `/api/x` -> `/api/v1/x` (a versioned path
    stays as it is)."""
    if path == PREFIX or path.startswith(PREFIX + "/") or not path.startswith(ALIAS + "/"):
        return path
    return PREFIX + path[len(ALIAS) :]


def url(path: str) -> str:
    """A link the API hands out (Location, a stream URL): always the versioned path, which
    a client outside the project is written against."""
    return documented_path(path)


def created(body: Any, path: str, status: int = 201) -> Response:
    """A 201 (or a 202 for queued work) whose `Location` is the new thing's versioned URL."""
    reply = jsonify(body)
    reply.status_code = status
    reply.headers["Location"] = url(path)
    return reply
