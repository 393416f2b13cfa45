"""The document is SDK-grade (issue 33, item 6): every operation named and tagged, every
error code it can answer listed under its status (and every code the source raises known,
under the status it is raised with), the exact tokens each operation needs, the headers a
client reads (Retry-After, RateLimit-*, Location), and an example on every request body
that its own model accepts."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pydantic
import pytest

from services.engines.registry import available_games
from services.gateway import BLUEPRINTS
from services.gateway.operations import CODES

from .conftest import bearer

ROOT = Path(__file__).resolve().parents[2]
WRITES = {"post", "put", "patch", "delete"}


def _operations(doc):
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            yield path, method, op


def test_every_operation_has_a_unique_id_and_a_known_tag(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    tags = {t["name"] for t in doc["tags"]}
    ids = [op["operationId"] for _, _, op in _operations(doc)]
    assert len(ids) == len(set(ids)) >= 40
    for path, method, op in _operations(doc):
        assert op["tags"] and set(op["tags"]) <= tags, (method, path)


def test_every_error_status_lists_its_codes_and_every_raised_code_is_known(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    enum = set(doc["components"]["schemas"]["ErrorCode"]["enum"])
    assert enum == set(CODES)
    for path, method, op in _operations(doc):
        for status, reply in op["responses"].items():
            if int(status) < 400:
                continue
            codes = reply["x-error-codes"]
            assert codes and all(CODES[c][0] == int(status) for c in codes), (method, path, status)
            assert all(f"`{c}`" in reply["description"] for c in codes)
        assert "store_unavailable" in op["responses"]["503"]["x-error-codes"]
    raised = _raised_codes()
    assert len(raised) >= 40
    for (status, code), where in raised.items():
        assert code in CODES, f"{code} ({where}) is not in services/gateway/operations.py CODES"
        assert CODES[code][0] == status, f"{code} is raised with {status} in {where}"


def _raised_codes() -> dict[tuple[int, str], str]:
    """(status, code) of every PlatformError(<status>, "<code>", ...) in the source."""
    found: dict[tuple[int, str], str] = {}
    for path in (ROOT / "services").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            status, code = node.args[0], node.args[1]
            if (
                name == "PlatformError"
                and isinstance(status, ast.Constant)
                and isinstance(code, ast.Constant)
            ):
                found[(status.value, code.value)] = f"{path.relative_to(ROOT)}:{node.lineno}"
    return found


def test_security_says_exactly_which_tokens_each_operation_needs(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    paths = doc["paths"]
    move = paths["/api/v1/tables/{table_id}/actions"]["post"]["security"]
    assert {"SeatToken": [], "PlayerSession": []} in move, "a bound seat: its token AND the session"
    assert {"SeatToken": []} in move and {} not in move
    ticket = paths["/api/v1/matchmaking/tickets/{ticket_id}"]["get"]["security"]
    assert ticket == [{"SeatToken": [], "PlayerSession": []}, {"SeatTokenHeader": [], "PlayerSession": []}]
    stream = paths["/api/v1/tables/{table_id}/events/stream"]["get"]["security"]
    assert {} in stream and {"StreamTicket": []} in stream
    assert paths["/api/v1/games"]["get"]["security"] == []
    assert paths["/api/v1/players/me"]["get"]["security"] == [{"PlayerSession": []}]
    for path, method, op in _operations(doc):
        if op["security"] and {} not in op["security"]:
            assert "401" in op["responses"], f"{method} {path} needs a token: its 401 is documented"


def test_writes_declare_their_key_limits_and_locations(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    assert set(doc["components"]["headers"]) >= {
        "Retry-After", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "Location",
    }  # fmt: skip
    for path, method, op in _operations(doc):
        for status in ("429", "503"):
            if status in op["responses"]:
                assert "Retry-After" in op["responses"][status]["headers"], (method, path, status)
        if method not in WRITES:
            continue
        assert {"$ref": "#/components/parameters/IdempotencyKey"} in op["parameters"], (method, path)
        assert {"idempotency_in_progress"} <= set(op["responses"]["409"]["x-error-codes"])
        assert "idempotency_key_reused" in op["responses"]["422"]["x-error-codes"]
        assert "429" in op["responses"], f"{method} {path}: every write can be refused by a limit"
        assert "RateLimit-Remaining" in op["responses"]["429"]["headers"]
        for status in ("201", "202"):
            if status in op["responses"]:
                assert "Location" in op["responses"][status]["headers"], (method, path)
    move = doc["paths"]["/api/v1/tables/{table_id}/actions"]["post"]["responses"]
    assert move["429"]["x-error-codes"] == ["move_limited"], (
        "moves: per seat and decision, not the write limit"
    )


def test_every_request_body_has_an_example_its_model_accepts(client):
    doc = client.get("/api/v1/openapi.json").get_json()
    models = _models()
    bodies = 0
    for path, method, op in _operations(doc):
        if "requestBody" not in op:
            continue
        media = op["requestBody"]["content"]["application/json"]
        name = media["schema"]["$ref"].rsplit("/", 1)[-1]
        assert "example" in media, f"{method} {path} has no example"
        try:
            models[name].model_validate(media["example"], strict=False)
        except pydantic.ValidationError as exc:
            raise AssertionError(f"{method} {path}: its example is refused: {exc}") from None
        bodies += 1
    assert bodies >= 10


def _models() -> dict[str, type[pydantic.BaseModel]]:
    import importlib

    out: dict[str, type[pydantic.BaseModel]] = {}
    for name in BLUEPRINTS:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
                out[value.__name__] = value
    return out


def _validator(doc, name: str):
    import jsonschema

    root = {"components": doc["components"], "$ref": f"#/components/schemas/{name}"}
    return jsonschema.Draft7Validator(root)


@pytest.mark.parametrize("game", available_games())
def test_each_games_views_and_details_match_exactly_one_schema_of_its_own(client, game):
    """The game data is typed from the protobuf messages: every view and action detail a
    client is sent (a seat's, a spectator's, along a game) matches its game's schema and
    no other game's, so a generated client's `oneOf` picks the right one."""
    doc = client.get("/api/v1/openapi.json").get_json()
    names = {g: (f"{_title(g)}View", f"{_title(g)}ActionDetail") for g in available_games()}
    checks = {n: _validator(doc, n) for pair in names.values() for n in pair}
    players = 4 if game == "tricky_cultists" else 2
    config = {"two_players": True} if game == "crazy_cultists" else {}
    tid = client.post("/api/v1/tables", json={"game": game, "players": players, "config": config}).get_json()[
        "table"
    ]
    tokens = [client.post(f"/api/v1/tables/{tid}/seats/{s}").get_json()["token"] for s in range(players)]
    rng = random.Random(7)
    seen = 0
    for _ in range(40):
        views = [client.get(f"/api/v1/tables/{tid}/view", headers=bearer(t)).get_json() for t in tokens]
        views.append(client.get(f"/api/v1/tables/{tid}/view").get_json())
        for answer in views:
            fits = [n for n in checks if n.endswith("View") and checks[n].is_valid(answer["view"])]
            assert fits == [names[game][0]], (
                fits,
                [e.message for e in checks[names[game][0]].iter_errors(answer["view"])][:3],
            )
            for action in answer["legal_actions"]:
                fits = [n for n in checks if n.endswith("Detail") and checks[n].is_valid(action["detail"])]
                assert fits == [names[game][1]], (fits, action)
                seen += 1
        if views[0]["status"] != "playing":
            break
        seat = views[-1]["to_act"][0]
        mine = views[seat]
        choice = rng.choice(mine["legal_actions"])
        client.post(
            f"/api/v1/tables/{tid}/actions",
            json={"action": choice["id"], "version": mine["version"]},
            headers=bearer(tokens[seat]),
        )
    assert seen > 20


def _title(game: str) -> str:
    return "".join(part.title() for part in game.split("_"))
