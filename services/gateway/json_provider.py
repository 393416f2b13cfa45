"""Flask's JSON, read and written by orjson.

Every move is two requests with JSON in or out (ask for the legal actions, post one), and
the standard library's encoder and decoder were a visible share of their cost. Installed
as the app's provider, orjson serves `jsonify` and `request.get_json` alike, so no route
needs its own encoding. The output is the same compact JSON with keys in insertion order;
a body orjson cannot read (including an integer beyond 64 bits) is malformed, as before.
"""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider


class OrjsonProvider(DefaultJSONProvider):
    sort_keys = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return orjson.dumps(obj, default=self.default).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        """`jsonify(obj)`, `jsonify(a, b)` (a list) or `jsonify(key=value)`, as Flask's."""
        if args and kwargs:
            raise TypeError("jsonify takes positional or keyword arguments, not both")
        obj = args[0] if len(args) == 1 else args or kwargs or None
        return self._app.response_class(orjson.dumps(obj, default=self.default), mimetype=self.mimetype)
