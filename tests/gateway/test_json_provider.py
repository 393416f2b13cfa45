"""The app's JSON provider (orjson) writes what Flask's own would, and reads JSON bodies."""

from __future__ import annotations

import json

from flask import Flask, jsonify
from flask.json.provider import DefaultJSONProvider

from services.gateway.json_provider import OrjsonProvider

PAYLOADS = [
    {"table": "ab", "version": 3, "to_act": [0, 2], "ok": True, "none": None, "x": 1.5},
    {1: "an int key", "nested": {2: [1, 2]}},  # Flask writes int keys as strings
    {"after": 10**30},  # beyond 64 bits: orjson refuses, Flask's encoder does not
    [1, "two", 3.0],
]


def test_replies_mean_what_flasks_own_encoder_says():
    app = Flask(__name__)
    app.json = OrjsonProvider(app)
    stdlib = DefaultJSONProvider(app)
    stdlib.sort_keys = False
    with app.app_context():
        for payload in PAYLOADS:
            reply = jsonify(payload)
            assert reply.mimetype == "application/json"
            assert json.loads(reply.get_data()) == json.loads(stdlib.dumps(payload))
        assert json.loads(jsonify(a=1, b=[2]).get_data()) == {"a": 1, "b": [2]}
        assert json.loads(jsonify(1, 2).get_data()) == [1, 2]
