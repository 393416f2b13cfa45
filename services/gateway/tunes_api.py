"""Balance tunes over HTTP: submit a tune spec, watch it search, read its proof and report.

The body of a submit is the same mapping as a tune spec file (docs/tune.md), as JSON,
checked by the spec's model (`TuneSpecInput`) and then by the parser `cultists tune` uses
(`services/balance/tune/spec.py`) before anything is written or queued: a bad spec is a 400 whose
`field` names the part of the spec at fault (`search.threshold`, `objectives.0`, `budget`).
A valid one is written
to Redis and its driver queued on the `tunes` queue (`workers/tune/tasks.py`): the search
never runs inside a request. Progress, summary, report and plots are read from Redis, so
any gateway process answers for any tune.

The Redis and Celery client are the sweeps blueprint's (balance_clients.py).
"""

from __future__ import annotations

import re
import time
from typing import Any, Literal

import orjson
from flask import Blueprint, Response, request
from pydantic import Field

from services.balance.in_flight import tunes_of
from services.balance.sweeps import control
from services.balance.sweeps.spec import lineup_bots
from services.balance.sweeps.store import new_id
from services.balance.tune.driver import send_drive
from services.balance.tune.spec import TuneSpecInput, parse_tune_spec
from services.balance.tune.store import TuneStore
from services.engines.core.bots import bot_names
from services.platform.bounds import check_bot
from services.platform.errors import PlatformError
from services.platform.quotas import check_bot_budget, check_in_flight

from .auth import may_manage, require_reader, require_role, signed
from .balance_clients import balance_clients
from .headers import REPORT_POLICY, talisman
from .openapi import designers_only, error_reply, json_body, json_content, ref
from .schemas import Body, openapi_components, query_parameters, validate
from .sweeps_api import RecentQuery, parse_spec_body, quotas
from .versions import created

bp = Blueprint("tunes", __name__, url_prefix="/api/tunes")

_ID = re.compile(r"^[0-9a-f]{16}$")
_PLOT = re.compile(r"^[a-z_0-9]+\.png$")


def _tunes() -> TuneStore:
    return TuneStore(balance_clients().store.r)


def _links(tune_id: str) -> dict[str, str]:
    base = f"/api/tunes/{tune_id}"
    report = signed(f"{base}/report", f"{base}/")  # followed by a browser: read_links.py
    return {"progress": base, "report": report, "cancel": f"{base}/cancel"}


def _number(meta: dict[str, str], name: str, default: float = 0.0) -> float:
    try:
        return float(meta[name])
    except (KeyError, ValueError):
        return default


def progress(tunes: TuneStore, tune_id: str) -> dict[str, Any] | None:
    """Where a tune stands: search games of the budget (percent), trials, best so far, the
    confirmation's games; None if there is no such tune."""
    meta = tunes.meta(tune_id)
    if not meta:
        return None
    budget = int(meta.get("budget", 0))
    spent = int(meta.get("spent", 0))
    status = meta["status"]
    started = _number(meta, "first_started") or None
    finished = _number(meta, "finished") or None
    elapsed = ((finished or time.time()) - started) if started else 0.0
    # The search may stop short of its budget (its space ran out): done is 100 %.
    percent = 100.0 if status == "done" else (round(min(100.0, 100.0 * spent / budget), 2) if budget else 0.0)
    return {
        "id": tune_id,
        "name": meta.get("name", ""),
        "game": meta.get("game", ""),
        "status": status,
        "phase": meta.get("phase", status),
        "games_done": spent,
        "budget": budget,
        "percent": percent,
        "trials": int(meta.get("trials", 0)),
        "trial_cap": int(meta.get("trial_cap", 0)),
        "best": orjson.loads(meta["best"]) if meta.get("best") else None,
        "best_score": _number(meta, "best_score") if meta.get("best_score") else None,
        "confirm_games_done": int(meta.get("confirm_games_done", 0)),
        "confirm_games_total": int(meta.get("confirm_games_total", 0)),
        "verdict": meta.get("verdict"),
        "drivers": int(meta.get("drivers", 0)),
        "elapsed_seconds": round(elapsed, 2),
        "error": meta.get("error"),
        "created": _number(meta, "created"),
        "links": _links(tune_id),
    }


def _known(tune_id: str, readable: bool = False) -> TuneStore:
    """The store, if there is such a tune; asked only of a designer (401/403 first). A
    `readable` route (report, plots) also takes a signed link."""
    if readable and _ID.match(tune_id):
        require_reader(f"/api/tunes/{tune_id}/")
    else:
        require_role("designer")
    tunes = _tunes()
    if not _ID.match(tune_id) or not tunes.exists(tune_id):
        raise PlatformError(404, "not_found", f"no tune {tune_id!r}")
    return tunes


@bp.post("")
def submit():
    """Designers and operators: the tune is theirs (its `owner`) and counts against their
    quotas."""
    owner = require_role("designer")
    spec = parse_spec_body(TuneSpecInput, parse_tune_spec)
    known = bot_names(spec.table.game_spec)
    for name in sorted(lineup_bots(spec.table.lineups)):
        check_bot(spec.game, name, known)  # the lobby's bounds: iterations, depth, rollouts
    limits = quotas()
    check_bot_budget(limits, (cell.lineup for cell in spec.table.cells()))
    ctx = balance_clients()
    tunes = TuneStore(ctx.store.r)
    mine = tunes_of(tunes, owner.id)
    check_in_flight(limits, "tune", mine.count, mine.games_left, spec.budget)
    tune_id = new_id()
    tunes.create(
        tune_id,
        spec.to_dict(),
        {
            "name": spec.name,
            "game": spec.game,
            "budget": spec.budget,
            "trial_cap": spec.trials,
            "owner": owner.id,
        },
    )
    send_drive(ctx.celery, tune_id)
    return created(progress(tunes, tune_id), f"/api/tunes/{tune_id}", 202)


@bp.get("")
def recent():
    """The latest tunes, newest first, with their progress (designers and operators)."""
    require_role("designer")
    limit = validate(RecentQuery, request.args.to_dict()).limit
    tunes = _tunes()
    rows = [p for p in (progress(tunes, i) for i in tunes.recent(limit)) if p is not None]
    return {"tunes": rows}


@bp.get("/<tune_id>")
def status(tune_id: str):
    """Progress; once done, the JSON summary under `summary`."""
    tunes = _known(tune_id)
    out = progress(tunes, tune_id)
    assert out is not None
    if out["status"] == "done":
        out["summary"] = tunes.summary(tune_id)
    return out


@bp.post("/<tune_id>/cancel")
def cancel(tune_id: str):
    """Stop a queued or running tune and the evaluation sweeps it has queued (its owner or
    an operator)."""
    tunes = _known(tune_id)
    may_manage(tunes.meta(tune_id).get("owner"))
    if not tunes.cancel(tune_id):
        raise PlatformError(409, "finished", f"tune {tune_id} already finished ({tunes.status(tune_id)})")
    store = balance_clients().store
    for sweep_id in tunes.sweep_ids(tune_id):
        control.cancel(store, sweep_id)  # a finished one stays as it is
    return progress(tunes, tune_id)


@bp.get("/<tune_id>/report")
@talisman(content_security_policy=REPORT_POLICY)  # the report's own <style>; still no script
def report(tune_id: str):
    """The HTML report of a finished tune; its images are the `plots/` beside it."""
    tunes = _known(tune_id, readable=True)
    p = progress(tunes, tune_id)
    assert p is not None
    if p["status"] in ("failed", "cancelled"):
        raise PlatformError(
            409, p["status"], f"tune {tune_id} {p['status']}" + (f": {p['error']}" if p["error"] else "")
        )
    summary = tunes.summary(tune_id)
    if summary is None:
        return p, 202
    from services.balance.tune.report import render_page

    page = render_page(summary, tunes.plot_names(tune_id))
    key = signed("", f"/api/tunes/{tune_id}/")  # the plots are followed by the browser too
    page = re.sub(r"src='plots/([a-z_0-9]+\.png)'", lambda m: f"src='plots/{m[1]}{key}'", page)
    return Response(page, mimetype="text/html")


@bp.get("/<tune_id>/plots/<name>")
def plot(tune_id: str, name: str):
    tunes = _known(tune_id, readable=True)
    data = tunes.plot(tune_id, name) if _PLOT.match(name) else None
    if data is None:
        raise PlatformError(404, "not_found", f"tune {tune_id} has no plot {name!r}")
    return Response(data, mimetype="image/png")


# --- OpenAPI ---------------------------------------------------------------------------
TUNE_ID = {
    "name": "tune_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{16}$"},
}
_PROGRESS = ref("TuneProgress")


class TuneProgress(Body):
    """Where a tune stands (`progress` above); its JSON summary under `summary` once done."""

    id: str
    name: str
    game: str
    status: Literal["queued", "running", "done", "failed", "cancelled"]
    phase: Literal["queued", "searching", "confirming", "done", "failed", "cancelled"]
    games_done: int = Field(description="search games played")
    budget: int
    percent: float = Field(ge=0, le=100, description="games_done / budget")
    trials: int
    trial_cap: int
    best: dict[str, Any] | None = Field(description="the best config so far")
    best_score: float | None
    confirm_games_done: int
    confirm_games_total: int
    verdict: str | None = Field(description="confirmed, no_change_needed, unproven, miss or none, once done")
    drivers: int = Field(description="driver runs (more than 1: a driver died and was replaced)")
    elapsed_seconds: float
    error: str | None
    created: float
    summary: dict[str, Any] | None = Field(None, description="the JSON summary (docs/tune.md), once done")
    links: dict[str, str] = Field(description="progress, report, cancel")


class TuneList(Body):
    tunes: list[TuneProgress]


OPENAPI_SCHEMAS = openapi_components(TuneSpecInput, TuneProgress, TuneList)

OPENAPI_PATHS = {
    "/api/tunes": {
        "post": {
            "summary": "Start a balance tune (validated before anything is queued)",
            "requestBody": json_body(
                "TuneSpecInput",
                {
                    "name": "crazy cultists 2p first-seat edge",
                    "game": "crazy_cultists",
                    "players": [2],
                    "config": {"two_players": True},
                    "search": {"threshold": {"low": 8, "high": 14}},
                    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.45, 0.55]}],
                    "budget": 600,
                },
            ),
            "responses": {
                "202": {"description": "queued", "content": json_content(_PROGRESS)},
                "400": error_reply(
                    "malformed body or a spec that cannot run (`invalid_spec`); `error.field` names "
                    "the spec field at fault"
                ),
                "413": error_reply("the body is too large"),
            },
        },
        "get": {
            "summary": "The latest tunes, newest first",
            "parameters": query_parameters(RecentQuery),
            "responses": {
                "200": {"description": "tunes with their progress", "content": json_content(ref("TuneList"))},
                "400": error_reply("bad limit"),
            },
        },
    },
    "/api/tunes/{tune_id}": {
        "get": {
            "summary": "A tune's progress (percent of its budget, trials, best so far); its summary once done",
            "parameters": [TUNE_ID],
            "responses": {
                "200": {"description": "progress", "content": json_content(_PROGRESS)},
                "404": error_reply("no such tune"),
            },
        }
    },
    "/api/tunes/{tune_id}/cancel": {
        "post": {
            "summary": "Cancel a queued or running tune (and the evaluation sweeps it queued)",
            "parameters": [TUNE_ID],
            "responses": {
                "200": {"description": "cancelled", "content": json_content(_PROGRESS)},
                "404": error_reply("no such tune"),
                "409": error_reply("the tune already finished"),
            },
        }
    },
    "/api/tunes/{tune_id}/report": {
        "get": {
            "summary": "The HTML report of a finished tune (its images under plots/)",
            "parameters": [TUNE_ID],
            "responses": {
                "200": {
                    "description": "the report",
                    "content": {"text/html": {"schema": {"type": "string"}}},
                },
                "202": {"description": "still running: its progress", "content": json_content(_PROGRESS)},
                "404": error_reply("no such tune"),
                "409": error_reply("the tune failed or was cancelled"),
            },
        }
    },
    "/api/tunes/{tune_id}/plots/{name}": {
        "get": {
            "summary": "One PNG plot of a finished tune's report",
            "parameters": [
                TUNE_ID,
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "responses": {
                "200": {
                    "description": "the plot",
                    # octet-stream too: what generated clients read as bytes (a PNG is one)
                    "content": {
                        "image/png": {"schema": {"type": "string", "format": "binary"}},
                        "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
                    },
                },
                "404": error_reply("no such tune or plot"),
            },
        }
    },
}

OPENAPI_PATHS = designers_only(
    OPENAPI_PATHS,
    (
        "/api/tunes/{tune_id}/report",
        "/api/tunes/{tune_id}/plots/{name}",
    ),
)
