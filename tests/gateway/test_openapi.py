"""The OpenAPI document is true: every /api route is in it, and schemathesis, with every
check it has (real app, real Redis, real engines), finds nothing over any operation, per
operation in each phase and in a stateful run, but the few cross-field rules KNOWN_GAPS
names (docs/gateway.md). No operation and no check is left out."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
import uuid
from collections.abc import Iterator

import orjson
import pytest
import schemathesis
from flask import Flask
from hypothesis import HealthCheck, settings
from schemathesis.checks import CHECKS, is_check_class, load_all_checks
from schemathesis.core.failures import CustomFailure, Failure
from schemathesis.generation.feedback import NO_FEEDBACK
from schemathesis.pytest._test_builder import build_operation_test

from services.gateway import BLUEPRINTS
from services.gateway.versions import documented_path

from .conftest import forget_sweeps_and_tunes


@schemathesis.check
def error_code_is_listed(ctx, response, case) -> bool | None:
    """An error's code is one its operation lists under that status (x-error-codes): a
    client's SDK can switch on the list the document gives it."""
    if response.status_code < 400 or response.request.method != case.operation.method.upper():
        return None  # (a method the path does not serve: `unsupported_method` checks its 405)
    reply = case.operation.definition.raw["responses"].get(str(response.status_code), {})
    code = orjson.loads(response.content)["error"]["code"]
    assert code in reply.get("x-error-codes", ()), (
        f"{case.operation.label} answered {response.status_code} {code!r}, not among "
        f"{reply.get('x-error-codes')}"
    )
    return None


def every_check() -> list:
    """Every check schemathesis has (its built-ins, and ours above): a newer schemathesis's
    new checks run too, unasked. `max_response_time` is a setting, not one of them (speed
    is the benches' to measure, not a test's)."""
    load_all_checks()
    return [check for check in CHECKS.get_all() if not is_check_class(check)]


BUILT_IN = {
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
    "negative_data_rejection",
    "positive_data_acceptance",
    "missing_required_header",
    "unsupported_method",
    "allow_header_conformance",
    "use_after_free",
    "ensure_resource_availability",
    "ignored_auth",
    "object_level_authorization",
}


# Where the document cannot say exactly what the API takes: by operation, each finding
# `check:error code` allowed there and why, every one a rule that crosses fields, which
# JSON Schema cannot state (docs/gateway.md). Any other finding, on any operation, fails
# the test; so does one of these with another error code. Only codes the operation can
# answer with a status positive_data_acceptance refuses (400) are here: its 404s
# (`unknown_seat`, `unknown_step`) and 409s are answers it takes.
_REPLAY_GAPS = {
    "positive_data_acceptance:malformed": "a source is `table`, or `game` with `seed`: no query "
    "parameter's schema can require or exclude another",
    "positive_data_acceptance:invalid_players": "the sizes a game takes are the `game` parameter's",
    "positive_data_acceptance:invalid_bots": "a line-up's length is the `players` parameter's, its "
    "names the `game`'s",
    "positive_data_acceptance:bot_limit": "`bots` is text in the bots' own syntax, whose numbers "
    "no pattern bounds",
    "positive_data_acceptance:invalid_config": "`config` is JSON text, its fields and bounds the "
    "`game` parameter's",
    "positive_data_acceptance:too_long": "a game's length is known only once it is played again",
}
KNOWN_GAPS: dict[str, dict[str, str]] = {
    # Each field of a table's config is exact per game (table_configs.py); the engine's
    # rules over a whole config are sums, products and comparisons across its fields.
    "POST /api/v1/tables": {
        "positive_data_acceptance:invalid_argument": "a rule over several config fields (a deck "
        "that deals its hands, a hand limit above the starting hand) is no JSON Schema keyword",
    },
    "GET /api/v1/replays": _REPLAY_GAPS,
    "GET /api/v1/replays/steps/{step}": _REPLAY_GAPS,
}


def findings(exc: BaseException) -> set[str]:
    """A schemathesis failure as `check:error code` (the code of the API's answer, when it
    sent its error shape); an error of another kind is named by its type."""
    if not isinstance(exc, BaseExceptionGroup):
        return {type(exc).__name__}
    names: set[str] = set()
    for failure in exc.exceptions:
        if isinstance(failure, CustomFailure):
            names.add(failure.title.partition("`")[2].rstrip("`"))
        elif isinstance(failure, Failure):
            names.update(type(failure).checks or (type(failure).__name__,))
        else:
            names.add(type(failure).__name__)
    code = re.search(r'"error":\{"code":"([a-z_]+)"', str(exc))
    return {f"{name}:{code.group(1) if code else '-'}" for name in names}


@contextlib.contextmanager
def known_gaps_pass(case) -> Iterator[None]:
    """Lets a finding that is one of its operation's KNOWN_GAPS pass (the generator goes on
    to other inputs, rather than stopping at it); any other is raised."""
    try:
        yield
    except BaseExceptionGroup as exc:
        if not findings(exc) <= set(KNOWN_GAPS.get(case.operation.label, {})):
            raise


def unique_idempotency_key(case) -> None:
    """A well-formed Idempotency-Key made unique, as the document asks of a client ("a unique
    key per write"): schemathesis draws the same few keys again for other bodies, which the
    API rightly refuses (422 `idempotency_key_reused`). A malformed key (a negative case) is
    sent as drawn, to be refused."""
    headers = case.headers or {}
    key = headers.get("Idempotency-Key")
    if isinstance(key, str) and 8 <= len(key) <= 255 and re.fullmatch(r"[\x21-\x7e]+", key):
        headers["Idempotency-Key"] = str(uuid.uuid4())


# Generated cases per operation and generation mode (the coverage phase's are on top)
EXAMPLES = int(os.environ.get("OPENAPI_FUZZ_EXAMPLES", "10"))


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


def test_every_known_gap_is_an_answer_its_operation_lists(client):
    """A gap is a code its operation really answers with 400 (listed under it in the
    document), on an operation the document has: none is kept for a code that moved to
    another status or an operation that went away."""
    doc = client.get("/api/openapi.json").get_json()
    for label, gaps in KNOWN_GAPS.items():
        method, path = label.split(" ", 1)
        listed = doc["paths"][path][method.lower()]["responses"]["400"]["x-error-codes"]
        for gap, reason in gaps.items():
            check, _, code = gap.partition(":")
            assert check in BUILT_IN and code in listed, (label, gap)
            assert reason and "\n" not in reason, (label, gap)


@pytest.mark.timeout(1200)  # a few hundred requests; a loaded 2-core machine takes minutes
def test_every_check_holds_over_every_operation(app):
    """Every operation, with every check schemathesis has, in each of its phases: the
    document's examples, its coverage cases (each bound and its neighbours, a missing
    required header, a method the path does not serve) and generated inputs, both ones the
    document calls valid (which must be accepted) and ones it calls invalid (which must be
    refused).

    Driven by hand over the operations, with schemathesis' own test builder (rather than
    its pytest plugin, whose fixture loader this pytest does not run), so one test covers
    the whole document with the app fixture of this suite."""
    checks = every_check()
    assert {check.__name__ for check in checks} >= BUILT_IN
    api = schemathesis.openapi.from_wsgi("/api/openapi.json", app)
    operations = [result.ok() for result in api.get_all_operations()]
    assert len(operations) >= 15
    budget = settings(
        max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    found = []
    for operation in operations:

        def run(case):
            unique_idempotency_key(case)
            with known_gaps_pass(case):
                case.call_and_validate(checks=checks)

        test = build_operation_test(
            config=api.config,
            operation=operation,
            test_func=run,
            given_kwargs={},
            feedback=NO_FEEDBACK,
            explicit_settings=budget,
        )
        try:
            test()
        except (Exception, BaseExceptionGroup) as exc:  # every operation runs; all findings at once
            found.append(f"{operation.label} ({', '.join(sorted(findings(exc)))}): {exc}")
    assert not found, "\n\n".join(found)


def test_stateful_run_over_linked_operations_finds_no_server_error(app):
    """Every check, as above (the stateful ones too: a deleted or created resource as its
    links say), over scenarios that follow the document's links from a new table to its
    view, seats, log and replay, so generated requests reach real tables, not only unknown
    ids; signed in as a guest player (X-Player-Token on every request, through
    schemathesis' auth hook, so `ignored_auth` also tries each call without it), so seats
    are taken, tickets queued and profiles changed by a player, as the pages do."""
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
        def before_call(self, case):
            unique_idempotency_key(case)

        def validate_response(self, response, case, **kwargs):
            # Every check (the default: all enabled, ours included), with the scenario's
            # recorder, which the stateful ones read (use_after_free, ensure_resource_availability).
            assert {c.__name__ for c in every_check()} >= BUILT_IN
            with known_gaps_pass(case):
                super().validate_response(response, case, **kwargs)

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


def test_a_display_names_pattern_is_the_rule_the_api_keeps(client):
    """The document's display-name pattern is the platform's own (players.NAME_PATTERN),
    and the API keeps it code point for code point: a visible character alone is a name,
    a control, format or separator one is not (nor a lone surrogate: no JSON carries one); white space around a name is
    trimmed, inside it only spaces; and what the pattern refuses, the API refuses."""
    import unicodedata

    from services.platform.players import NAME, NAME_PATTERN

    doc = client.get("/api/openapi.json").get_json()
    for model in ("GuestSignIn", "Rename"):
        assert doc["components"]["schemas"][model]["properties"]["name"]["pattern"] == NAME_PATTERN
    hidden = {"Cc", "Cf", "Zs", "Zl", "Zp"}
    for code in (*range(0xD800), *range(0xE000, 0x110000)):  # (a lone surrogate does not parse)
        char = chr(code)
        visible = code > 0xFFFF or unicodedata.category(char) not in hidden  # (the BMP's)
        assert bool(NAME.fullmatch(char)) == visible, hex(code)
    assert NAME.fullmatch(" \tAda Lovelace\u3000") and not NAME.fullmatch("Ada\tLovelace")
    assert not NAME.fullmatch("   ") and not NAME.fullmatch("Ada\u202eecalevol")
    made = client.post("/api/players/guest", json={"device": "d" * 16, "name": " \u00a0Ada \U000f0000 "})
    assert made.status_code == 201, made.get_json()
    assert made.get_json()["name"] == "Ada \U000f0000"  # trimmed; a private-use character is let be
    session = {"X-Player-Token": made.get_json()["token"]}
    # Marks and spaces inside are a name's (docs/security.md): only hidden characters are not.
    renamed = client.patch("/api/players/me", json={"name": "xxx !"}, headers=session)
    assert renamed.status_code == 200 and renamed.get_json()["name"] == "xxx !", renamed.get_json()
    for name in ("Ada\u200dL", "\u0007", "Ada\nL", " ", "Ada\u2028L"):
        refused = client.patch("/api/players/me", json={"name": name}, headers=session)
        assert refused.status_code == 400 and refused.get_json()["error"]["code"] == "malformed", name
        assert "pattern" in refused.get_json()["error"]["message"], refused.get_json()
    lone = b'{"name": "Ada\\ud800"}'
    refused = client.patch("/api/players/me", data=lone, headers=session, content_type="application/json")
    assert refused.status_code == 400 and refused.get_json()["error"]["code"] == "malformed"


def test_a_table_config_schema_is_the_engines_own(client):
    """Each game's `config` in the document is its engine's: every field of its config,
    no other; each whole number bounded by the engine's config_limits; names from its
    config_choices; and the API refuses what the schema does (a number as text, a field
    the game lacks, a number past its bound), before any engine is asked."""
    from services.engines.core.config import config_limits
    from services.engines.registry import available_games, load_game
    from services.gateway.table_configs import config_name

    doc = client.get("/api/openapi.json").get_json()
    for game in available_games():
        spec = load_game(game)
        schema = doc["components"]["schemas"][config_name(game)]
        assert schema["additionalProperties"] is False
        assert set(schema["properties"]) == {f.name for f in dataclasses.fields(spec.config_class)}
        for name, (low, high) in config_limits(spec.config_class).items():
            prop = schema["properties"][name]
            assert (prop["type"], prop["minimum"], prop["maximum"]) == ("integer", low, high), name
        for name, names in spec.config_choices.items():
            prop = schema["properties"][name]
            assert (prop.get("items", prop))["enum"] == list(names), name
    crazy = "crazy_cultists"
    for config, code in (
        ({"favor_1": "4"}, "invalid_config"),
        ({"two_players": "yes"}, "invalid_config"),
        ({"favour_1": 4}, "invalid_config"),
        ({"variant": "devilish "}, "invalid_config"),
        ({"hand_limit": 0}, "config_limit"),
    ):
        refused = client.post("/api/tables", json={"game": crazy, "config": config})
        assert refused.status_code == 400, (config, refused.get_json())
        error = refused.get_json()["error"]
        assert (error["code"], error["field"]) == (code, f"config.{next(iter(config))}"), error
    trash = {"game": "trash_cult", "players": 3, "config": {"cults": ["Rat", "Skunk", "Raccoon"]}}
    assert client.post("/api/tables", json=trash).status_code == 201
    emptied = client.post("/api/tables", json={"game": crazy, "config": {"favor_1": None}})
    assert emptied.status_code == 201 and emptied.get_json()["config"]["favor_1"] == 15, "null: the default"
