"""The OpenAPI document is true: every /api route is in it, and a schemathesis run over
it (real app, real Redis, real engines) finds no server error and no undocumented reply."""

from __future__ import annotations

import re
import time

import orjson
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, given, settings
from schemathesis import checks

from services.gateway import BLUEPRINTS
from services.gateway.versions import documented_path

from .conftest import forget_sweeps_and_tunes


@schemathesis.check
def error_code_is_listed(ctx, response, case) -> bool | None:
    """An error's code is one its operation lists under that status (x-error-codes): a
    client's SDK can switch on the list the document gives it."""
    if response.status_code < 400:
        return None
    reply = case.operation.definition.raw["responses"].get(str(response.status_code), {})
    code = orjson.loads(response.content)["error"]["code"]
    assert code in reply.get("x-error-codes", ()), (
        f"{case.operation.label} answered {response.status_code} {code!r}, not among "
        f"{reply.get('x-error-codes')}"
    )
    return None


CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    error_code_is_listed,
]


def _documented_form(rule: str) -> str:
    """A route as the document lists it: its versioned path, `{name}` for `<conv:name>`."""
    return documented_path(re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule))


def test_every_api_route_is_documented(app, client):
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    routes = [r for r in app.url_map.iter_rules() if r.rule.startswith("/api")]
    assert len(routes) >= 15
    for rule in routes:
        path = _documented_form(rule.rule)
        assert path in doc["paths"], f"{rule.rule} is not documented"
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            assert method.lower() in doc["paths"][path], f"{method} {rule.rule} is not documented"
    documented = {(p, m) for p, ops in doc["paths"].items() for m in ops}
    served = {(_documented_form(r.rule), m.lower()) for r in routes for m in r.methods - {"HEAD", "OPTIONS"}}
    assert documented == served, "the document lists nothing the app does not serve"
    assert len(BLUEPRINTS) >= 4


def test_schemathesis_finds_no_server_error(app):
    """Every operation, with generated inputs, each checked against the document.

    Driven by hand over the operations (rather than schemathesis' pytest plugin) so one
    test covers the whole document with the app fixture of this suite."""
    api = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        def run(case):
            case.call_and_validate(checks=CHECKS)

        run()


def test_stateful_run_over_linked_operations_finds_no_server_error(app):
    """Follows the document's links from a new table to its view, seats, log and replay,
    so generated requests reach real tables, not only unknown ids; signed in as a guest
    player (X-Player-Token on every request), so seats are taken, tickets queued and
    profiles changed by a player, as the pages do."""
    api = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    client = app.test_client()

    @api.auth()
    class GuestSession:
        def get(self, case, context):
            device = f"schemathesis-{time.monotonic_ns()}"
            return client.post("/api/players/guest", json={"device": device}).get_json()["token"]

        def set(self, case, data, context):
            case.headers = {**(case.headers or {}), "X-Player-Token": data}

    machine = api.as_state_machine()

    class Checked(machine):  # type: ignore[misc, valid-type]
        def validate_response(self, response, case, **kwargs):
            case.validate_response(response, checks=CHECKS)

        def teardown(self):
            # Each scenario starts without the tables, sweeps and tunes the last one made:
            # their lists feed the links, and hypothesis replays a scenario expecting the
            # same answers (else "inconsistent data generation"). The guest sessions stay.
            redis = app.extensions["cultists"].redis
            for pattern in ("gw:{t:*", "gw:{ix:*", "gw:{mm:*"):
                for key in redis.scan_iter(pattern, count=1000):
                    redis.delete(key)
            forget_sweeps_and_tunes(redis)

    budget = settings(
        max_examples=40,
        stateful_step_count=8,
        deadline=None,
        database=None,
        # One fixed sequence of scenarios: which rules are enabled follows the answers
        # (a bundle fills when a table is made), and a random run that meets a different
        # state on its replay stops with hypothesis's FlakyStrategyDefinition, not a finding.
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    Checked.run(settings=budget)


def test_sweep_and_tune_schemas_are_their_models(client):
    """The spec a sweep or tune submit takes, and the progress it answers, are in the
    document exactly as their models declare them: every field, no other, the same
    required ones; and each POST body names its model."""
    from services.balance.sweeps.spec import SweepSpecInput
    from services.balance.tune.spec import TuneSpecInput
    from services.gateway.sweeps_api import SweepProgress, SweepSummary
    from services.gateway.tunes_api import TuneProgress

    doc = client.get("/api/openapi.json").get_json()
    schemas = doc["components"]["schemas"]
    for model in (SweepSpecInput, TuneSpecInput, SweepProgress, SweepSummary, TuneProgress):
        schema = schemas[model.__name__]
        assert set(schema["properties"]) == set(model.model_fields), model.__name__
        required = {n for n, f in model.model_fields.items() if f.is_required()}
        assert set(schema.get("required", [])) == required, model.__name__
    for path, model in (("/api/v1/sweeps", SweepSpecInput), ("/api/v1/tunes", TuneSpecInput)):
        body = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{model.__name__}"}
        assert schemas[model.__name__]["additionalProperties"] is False  # a typo in a spec is refused
    assert "SweepSpec" not in schemas and "TuneSpec" not in schemas  # the hand-written ones are gone


def test_the_progress_answers_have_their_models_keys(redis_url):
    """What `progress` builds is what the models declare (no key the document leaves out)."""
    from services.balance.sweeps import control
    from services.balance.sweeps.spec import parse_spec
    from services.balance.sweeps.store import SweepStore, new_id
    from services.balance.tune.store import TuneStore
    from services.gateway.sweeps_api import SweepProgress
    from services.gateway.tunes_api import TuneProgress, progress

    store = SweepStore.from_url(redis_url)
    tunes = TuneStore.from_url(redis_url)
    tune_id = new_id()
    tunes.create(
        tune_id, {"game": "trash_cult"}, {"name": "t", "game": "trash_cult", "budget": 10, "trial_cap": 5}
    )
    app = Flask(__name__)  # a tune's report link is signed with the app's Redis key
    app.config["SWEEPS_REDIS_URL"] = redis_url
    with app.app_context():
        tune = progress(tunes, tune_id)
    assert tune is not None
    assert set(tune) | {"summary"} == set(TuneProgress.model_fields)
    TuneProgress.model_validate(tune)
    spec = parse_spec({"game": "trash_cult", "games": 1})
    sweep_id = new_id()
    store.create(sweep_id, spec.to_dict(), 1, 1)
    sweep = control.progress(store, sweep_id)
    assert sweep is not None
    assert set(sweep) | {"cells", "links"} == set(SweepProgress.model_fields)
    SweepProgress.model_validate(sweep)
