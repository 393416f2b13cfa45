"""Flask's JSON, read and written by orjson.

Every move is two requests with JSON in or out (ask for the legal actions, post one), and
the standard library's encoder and decoder were a visible share of their cost. Installed
as the app's provider, orjson serves `jsonify` and `request.get_json` alike, so no route
needs its own encoding. The output is the same compact JSON with keys in insertion order;
a body orjson cannot read (including an integer beyond 64 bits) is malformed, as before.
What orjson cannot write (an integer beyond 64 bits, say, echoed from a query) goes
through Flask's own encoder instead, so every reply Flask could send is still sent.
"""

from __future__ import annotations

from typing import Any, cast

import orjson
from flask import Response
from flask.json.provider import DefaultJSONProvider


class OrjsonProvider(DefaultJSONProvider):
    sort_keys = False

    def _encode(self, obj: Any) -> bytes:
        try:
            return orjson.dumps(obj, default=self.default, option=orjson.OPT_NON_STR_KEYS)
        except orjson.JSONEncodeError:
            return super().dumps(obj).encode()

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return self._encode(obj).decode()

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return orjson.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        """`jsonify(obj)`, `jsonify(a, b)` (a list) or `jsonify(key=value)`, as Flask's."""
        if args and kwargs:
            raise TypeError("jsonify takes positional or keyword arguments, not both")
        obj = args[0] if len(args) == 1 else args or kwargs or None
        # Flask types _app as its sansio base (whose Response takes a status first).
        return cast(type[Response], self._app.response_class)(self._encode(obj), mimetype=self.mimetype)
