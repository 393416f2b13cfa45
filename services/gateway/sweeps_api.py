"""Balance sweeps over HTTP: submit a spec, watch its progress, cancel it, fetch its result.

The body of a submit is the same mapping as a sweep spec file (docs/sweeps.md) and is
validated completely before anything is queued: a bad spec is a 400 that names the
problem, and leaves no trace in Redis or on the queue. Progress, result and report are read
from Redis (services/balance/sweeps/store.py), so any gateway process answers for any sweep, and a
sweep outlives the process that submitted it.

The blueprint needs only a Redis URL (balance_clients.py says which). Chunk tasks are sent
by name through a light Celery client, like the table tasks.
Errors are raised as `PlatformError`, the gateway's one shape, `{"error": {"code", "message"}}`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from flask import Blueprint, Response, current_app, jsonify, request
from pydantic import BaseModel, ConfigDict, Field

from services.balance.in_flight import sweeps_of
from services.balance.sweeps import control
from services.balance.sweeps.spec import SpecError, SweepSpecInput, lineup_bots, parse_spec
from services.balance.sweeps.store import INDEX
from services.engines.core.bots import bot_names
from services.platform.bounds import check_bot
from services.platform.errors import PlatformError
from services.platform.quotas import DesignerQuotas, check_bot_budget, check_in_flight

from .auth import may_manage, require_reader, require_role, signed
from .balance_clients import balance_clients
from .headers import REPORT_POLICY, talisman
from .offload import run_cpu_bound
from .openapi import designers_only, error_reply, json_body, json_content, ref
from .schemas import Body, openapi_components, parse_body, query_parameters, validate
from .versions import created

bp = Blueprint("sweeps", __name__, url_prefix="/api/sweeps")

_ID = re.compile(r"^(local-)?[0-9a-f]{16}$")
# Cell configurations a submit deals before answering; its planner deals every one.
INLINE_DEALS = 16
S = TypeVar("S", bound=BaseModel)
T = TypeVar("T")


def _links(sweep_id: str) -> dict[str, str]:
    """The sweep's routes; the report's is signed, for a browser that follows it without a
    session (read_links.py)."""
    base = f"/api/sweeps/{sweep_id}"
    return {
        "progress": base,
        "result": f"{base}/result",
        "report": signed(f"{base}/report", f"{base}/"),
        "cancel": f"{base}/cancel",
    }


def _known(sweep_id: str, readable: bool = False) -> bool:
    """Whether there is such a sweep; asked only of a designer (401/403 first), so nobody
    else learns which ids exist. A `readable` route also takes a signed link."""
    if readable and _ID.match(sweep_id):
        require_reader(f"/api/sweeps/{sweep_id}/")
    else:
        require_role("designer")
    return bool(_ID.match(sweep_id)) and balance_clients().store.exists(sweep_id)


def parse_spec_body(model: type[S], parse: Callable[[S], T]) -> T:
    """The body as a spec: its shape checked by the spec's own model (400 `malformed` naming
    the field, as every body), then by the spec's own parser, the one files and the CLI
    use (400 `invalid_spec`, naming the field when one part is at fault)."""
    body = parse_body(model)
    try:
        return parse(body)
    except SpecError as exc:
        raise PlatformError(
            400, "invalid_spec", str(exc), **({"field": exc.field} if exc.field else {})
        ) from None


class RecentQuery(Body):
    model_config = ConfigDict(strict=False)  # query strings are text

    limit: int = Field(20, ge=1, le=100, description="how many, newest first")


def quotas() -> DesignerQuotas:
    """The designers' quotas: the platform's settings, or the environment's on a bare app."""
    platform = current_app.extensions.get("cultists")
    if platform is not None:
        return platform.settings.quotas
    found = current_app.extensions.get("cultists.quotas")
    if found is None:
        found = current_app.extensions["cultists.quotas"] = DesignerQuotas.from_env()
    return found


@bp.post("")
def submit():
    """Designers and operators: the sweep is theirs (its `owner`), and counts against their
    quotas, all checked before anything is planned: the spec's size from its numbers alone
    (at most `max_chunks` chunk tasks), the bots' search per game, then their sweeps and
    games in flight. Nothing here grows with the sweep's games or chunks: the sweep is
    recorded and a worker plans it and queues its chunks (control.submit_to_plan; the
    progress's `planned_percent` follows it); the first `INLINE_DEALS` cell configurations
    are dealt here, so a spec that cannot deal is usually a 400 at once, and the planner
    deals the rest (a failure there fails the sweep, naming the cell)."""
    owner = require_role("designer")
    limits = quotas()
    spec = parse_spec_body(
        SweepSpecInput, lambda body: parse_spec(body, max_chunks=limits.max_chunks, deals=INLINE_DEALS)
    )
    known = bot_names(spec.game_spec)
    for name in sorted(lineup_bots(spec.lineups)):
        check_bot(spec.game, name, known)  # the lobby's bounds: iterations, depth, rollouts
    check_bot_budget(limits, (cell.lineup for cell in spec.cells()))
    ctx = balance_clients()
    mine = sweeps_of(ctx.store, owner.id)
    check_in_flight(limits, "sweep", mine.count, mine.games_left, spec.total_games)
    sweep_id = control.submit_to_plan(spec, ctx.store, ctx.celery, extra={"owner": owner.id})
    out = control.progress(ctx.store, sweep_id)
    assert out is not None
    out["cells"] = len(spec.cells())
    out["links"] = _links(sweep_id)
    return created(out, f"/api/sweeps/{sweep_id}", 202)


@bp.get("")
def recent():
    """The latest sweeps, newest first, with their progress (designers and operators)."""
    require_role("designer")
    limit = validate(RecentQuery, request.args.to_dict()).limit
    store = balance_clients().store
    ids = [raw.decode() for raw in store.r.zrevrange(INDEX, 0, limit - 1)]
    rows = [{**p, "links": _links(p["id"])} for p in (control.progress(store, i) for i in ids) if p]
    return jsonify({"sweeps": rows})


@bp.get("/<sweep_id>")
def progress(sweep_id: str):
    if not _known(sweep_id):
        raise PlatformError(404, "not_found", f"no sweep {sweep_id!r}")
    ctx = balance_clients()
    out = control.progress(ctx.store, sweep_id)
    assert out is not None
    out["links"] = _links(sweep_id)
    return jsonify(out)


@bp.post("/<sweep_id>/cancel")
def cancel(sweep_id: str):
    """Its owner or an operator (a nightly sweep has no owner: operators only)."""
    if not _known(sweep_id):
        raise PlatformError(404, "not_found", f"no sweep {sweep_id!r}")
    store = balance_clients().store
    may_manage(store.meta(sweep_id).get("owner"))
    if not control.cancel(store, sweep_id):
        raise PlatformError(409, "finished", f"sweep {sweep_id} already finished ({store.status(sweep_id)})")
    out = control.progress(store, sweep_id)
    return jsonify(out)


def _finished_summary(sweep_id: str) -> tuple[dict[str, Any] | None, tuple[Response, int] | None]:
    """The summary, or the 202 with its progress while it is still running (404 and 409
    are raised)."""
    if not _known(sweep_id, readable=True):
        raise PlatformError(404, "not_found", f"no sweep {sweep_id!r}")
    ctx = balance_clients()
    summary = ctx.store.summary(sweep_id)
    if summary is not None:
        return summary, None
    p = control.progress(ctx.store, sweep_id)
    assert p is not None
    if p["status"] in ("cancelled", "failed"):
        raise PlatformError(
            409, p["status"], f"sweep {sweep_id} {p['status']}" + (f": {p['error']}" if p["error"] else "")
        )
    control.nudge(ctx.store, ctx.celery, sweep_id)
    p["links"] = _links(sweep_id)
    return None, (jsonify(p), 202)


@bp.get("/<sweep_id>/result")
def result(sweep_id: str):
    summary, why = _finished_summary(sweep_id)
    if why is not None:
        return why
    return jsonify(summary)


@bp.get("/<sweep_id>/report")
@talisman(content_security_policy=REPORT_POLICY)  # the report's own <style>; still no script
def report(sweep_id: str):
    """The HTML report with its plots inline, drawn from the stored summary."""
    summary, why = _finished_summary(sweep_id)
    if why is not None:
        return why
    from services.balance.sweeps.plots import render_all
    from services.balance.sweeps.report import render_html

    assert summary is not None
    page = run_cpu_bound(lambda: render_html(summary, render_all(summary["aggregates"]), inline=True))
    # Inline the replay records' links: the report page serves them from this API.
    page = re.sub(
        r'href="replays/(cell-\d+\.json)"',
        lambda m: (
            'href="' + signed(f"/api/sweeps/{sweep_id}/replays/{m[1]}", f"/api/sweeps/{sweep_id}/") + '"'
        ),
        page,
    )
    return Response(page, mimetype="text/html")


@bp.get("/<sweep_id>/replays/cell-<int:cell>.json")
def replay(sweep_id: str, cell: int):
    """A `cultists replay`-compatible record of a cell's representative game."""
    if not _known(sweep_id, readable=True):
        raise PlatformError(404, "not_found", f"no sweep {sweep_id!r}")
    record = balance_clients().store.replays(sweep_id).get(cell)
    if record is None:
        raise PlatformError(404, "not_found", f"sweep {sweep_id} has no replay for cell {cell}")
    return jsonify(record)


# --- OpenAPI ---------------------------------------------------------------------------
SWEEP_ID = {"name": "sweep_id", "in": "path", "required": True, "schema": {"type": "string"}}


class SweepProgress(Body):
    """Where a sweep stands (`services.balance.sweeps.control.progress`, plus the API's own keys)."""

    id: str
    name: str | None = Field(None, description="the spec's name (what /designer lists it by)")
    game: str | None = Field(None, description="the game it plays")
    status: Literal["queued", "running", "done", "cancelled", "failed"]
    kind: Literal["adhoc", "nightly"] = "adhoc"
    games_done: int
    total_games: int
    percent: float = Field(ge=0, le=100)
    chunks_done: int
    total_chunks: int
    chunks_queued: int = Field(description="chunk tasks its planner has queued so far")
    planned_percent: float = Field(ge=0, le=100, description="how much of its plan is queued")
    chunks_failed: int
    chunks_requeued: int
    games_per_second: float
    seconds_left: float | None = Field(description="null until the rate is known")
    elapsed_seconds: float
    error: str | None
    cells: int | None = Field(None, description="cells of the sweep (on submit)")
    links: dict[str, str] | None = Field(None, description="progress, result, report, cancel")


class SweepSummary(Body):
    """A finished sweep's JSON summary (docs/sweeps.md)."""

    sweep: str
    name: str
    game: str
    spec: SweepSpecInput = Field(description="the spec, normalised: it parses back to the same sweep")
    run: dict[str, Any]
    aggregates: dict[str, Any] = Field(
        description="per-cell tables, variants, paired comparisons with the base cells, tests (docs/sweeps.md)"
    )


class SweepList(Body):
    sweeps: list[SweepProgress]


OPENAPI_SCHEMAS = openapi_components(SweepSpecInput, SweepProgress, SweepSummary, SweepList)

_PROGRESS = ref("SweepProgress")

OPENAPI_PATHS = {
    "/api/sweeps": {
        "post": {
            "summary": "Submit a balance sweep (validated before anything is queued)",
            "requestBody": json_body(
                "SweepSpecInput",
                {"name": "two-player seats", "game": "trash_cult", "players": [2], "games": 200, "seed": 1},
            ),
            "responses": {
                "202": {"description": "queued", "content": json_content(_PROGRESS)},
                "400": error_reply(
                    "malformed body (`error.field` names the field) or a spec that cannot run "
                    "(`invalid_spec`: unknown config field or bot, players the game does not take)"
                ),
                "413": error_reply("the body is too large"),
            },
        },
        "get": {
            "summary": "The latest sweeps, newest first",
            "parameters": query_parameters(RecentQuery),
            "responses": {
                "200": {
                    "description": "sweeps with their progress",
                    "content": json_content(ref("SweepList")),
                },
                "400": error_reply("bad limit"),
            },
        },
    },
    "/api/sweeps/{sweep_id}": {
        "get": {
            "summary": "A sweep's progress: games done, percentage, games/s, time left",
            "parameters": [SWEEP_ID],
            "responses": {
                "200": {"description": "progress", "content": json_content(_PROGRESS)},
                "404": error_reply("no such sweep"),
            },
        }
    },
    "/api/sweeps/{sweep_id}/cancel": {
        "post": {
            "summary": "Cancel a queued or running sweep",
            "parameters": [SWEEP_ID],
            "responses": {
                "200": {"description": "cancelled", "content": json_content(_PROGRESS)},
                "404": error_reply("no such sweep"),
                "409": error_reply("the sweep already finished"),
            },
        }
    },
    "/api/sweeps/{sweep_id}/result": {
        "get": {
            "summary": "The JSON summary of a finished sweep",
            "parameters": [SWEEP_ID],
            "responses": {
                "200": {
                    "description": "the summary",
                    "content": json_content(ref("SweepSummary")),
                },
                "202": {"description": "still running: its progress", "content": json_content(_PROGRESS)},
                "404": error_reply("no such sweep"),
                "409": error_reply("the sweep was cancelled or failed"),
            },
        }
    },
    "/api/sweeps/{sweep_id}/report": {
        "get": {
            "summary": "The HTML report of a finished sweep (plots inline)",
            "parameters": [SWEEP_ID],
            "responses": {
                "200": {
                    "description": "the report",
                    "content": {"text/html": {"schema": {"type": "string"}}},
                },
                "202": {"description": "still running: its progress", "content": json_content(_PROGRESS)},
                "404": error_reply("no such sweep"),
                "409": error_reply("the sweep was cancelled or failed"),
            },
        }
    },
    "/api/sweeps/{sweep_id}/replays/cell-{cell}.json": {
        "get": {
            "summary": "A `cultists replay` record of a cell's representative game",
            "parameters": [
                SWEEP_ID,
                {"name": "cell", "in": "path", "required": True, "schema": {"type": "integer"}},
            ],
            "responses": {
                "200": {"description": "the replay record", "content": json_content({"type": "object"})},
                "404": error_reply("no such sweep or cell"),
            },
        }
    },
}

OPENAPI_PATHS = designers_only(
    OPENAPI_PATHS,
    (
        "/api/sweeps/{sweep_id}/report",
        "/api/sweeps/{sweep_id}/result",
        "/api/sweeps/{sweep_id}/replays/cell-{cell}.json",
    ),
)
