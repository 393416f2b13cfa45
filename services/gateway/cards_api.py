"""Card ablations over HTTP: which card is too strong, by experiment (services/balance/sweeps/ablation.py).

`POST /api/cards` takes the spec `cultists cards` reads, validates it completely (every
card and changed count by the game's own config), checks the designer's quotas on the
whole ablation sweep (its chunks, its bots, their sweeps and games in flight), and only
then queues it as one sweep. `GET /api/cards/<id>` gives its progress, and once it is done
the ablation report, computed from the sweep's per-game records. Designers and operators
only, as sweeps.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from flask import Blueprint, jsonify

from services.balance.in_flight import sweeps_of
from services.balance.sweeps import control
from services.balance.sweeps.ablation import CardsSpecInput, parse_cards_spec, report_from_folder
from services.balance.sweeps.spec import lineup_bots
from services.engines.core.bots import bot_names
from services.platform.bounds import check_bot
from services.platform.errors import PlatformError
from services.platform.quotas import check_bot_budget, check_in_flight

from .auth import require_role
from .balance_clients import balance_clients
from .offload import run_cpu_bound
from .openapi import designers_only, error_reply, json_body, json_content
from .schemas import openapi_components
from .sweeps_api import parse_spec_body, quotas
from .versions import created

bp = Blueprint("cards", __name__, url_prefix="/api/cards")

_ID = re.compile(r"^[0-9a-f]{16}$")
# Its own name (not `sweep_id`): an ablation's id is its sweep's, but only ablations answer here.
ABLATION_ID = {"name": "ablation_id", "in": "path", "required": True, "schema": {"type": "string"}}


def _links(sweep_id: str) -> dict[str, str]:
    return {"progress": f"/api/cards/{sweep_id}", "sweep": f"/api/sweeps/{sweep_id}"}


@bp.post("")
def submit():
    """Designers and operators: the ablation sweep is theirs and counts against their quotas,
    all checked before anything is planned or queued."""
    owner = require_role("designer")
    limits = quotas()
    spec = parse_spec_body(CardsSpecInput, lambda body: parse_cards_spec(body, max_chunks=limits.max_chunks))
    sweep = spec.sweep
    known = bot_names(sweep.game_spec)
    for name in sorted(lineup_bots(sweep.lineups)):
        check_bot(sweep.game, name, known)
    check_bot_budget(limits, (cell.lineup for cell in sweep.cells()))
    ctx = balance_clients()
    mine = sweeps_of(ctx.store, owner.id)
    check_in_flight(limits, "sweep", mine.count, mine.games_left, sweep.total_games)
    extra = {"owner": owner.id, "ablation": orjson.dumps(spec.to_dict()).decode()}
    sweep_id = control.submit(sweep, ctx.store, ctx.celery, extra=extra)
    out = control.progress(ctx.store, sweep_id) or {}
    out.update(
        {
            "cells": len(sweep.cells()),
            "variants": [{"card": v.card, "change": v.change, "count": v.count} for v in spec.variants],
            "links": _links(sweep_id),
        }
    )
    return created(out, f"/api/cards/{sweep_id}", 202)


@bp.get("/<ablation_id>")
def result(ablation_id: str):
    """Progress while the sweep runs (202); once done, the ablation report (200)."""
    require_role("designer")
    sweep_id = ablation_id  # an ablation is its sweep: the same id
    ctx = balance_clients()
    meta = ctx.store.meta(sweep_id) if _ID.match(sweep_id) else None
    if not meta or "ablation" not in meta:
        raise PlatformError(404, "not_found", f"no card ablation {sweep_id!r}")
    summary = ctx.store.summary(sweep_id)
    p = control.progress(ctx.store, sweep_id) or {}
    if summary is None:
        if p.get("status") in ("cancelled", "failed"):
            raise PlatformError(409, p["status"], f"card ablation {sweep_id} {p['status']}")
        control.nudge(ctx.store, ctx.celery, sweep_id)
        return jsonify({**p, "links": _links(sweep_id)}), 202
    spec = parse_cards_spec(orjson.loads(meta["ablation"]))
    records = summary.get("records") or {}
    if not records:
        raise PlatformError(
            409, "no_records", f"card ablation {sweep_id}: its per-game records were not written"
        )

    def build() -> dict[str, Any]:
        from pathlib import Path

        return report_from_folder(spec, Path(records["path"]) / "games")

    report = run_cpu_bound(build)
    return jsonify({**p, "report": report, "links": _links(sweep_id)})


OPENAPI_SCHEMAS = openapi_components(CardsSpecInput)

OPENAPI_PATHS = designers_only(
    {
        "/api/cards": {
            "post": {
                "summary": "Queue a card ablation: each card's count -1 / +1 (or removed) against the base",
                "requestBody": json_body(
                    "CardsSpecInput",
                    {"game": "trash_cult", "games": 400, "players": [2], "cards": ["Protection Spell"]},
                ),
                "responses": {
                    "202": {
                        "description": "queued: the sweep's progress",
                        "content": json_content({"type": "object"}),
                    },
                    "400": error_reply(
                        "malformed body, or a spec that cannot run (`invalid_spec`: an unknown card, a count "
                        "the game refuses; `error.field` names `cards.<i>`)"
                    ),
                    "403": error_reply("its bots search more than a designer's games may"),
                    "429": error_reply("over the designer's sweeps or games in flight"),
                },
            }
        },
        "/api/cards/{ablation_id}": {
            "get": {
                "summary": "A card ablation's progress, and its report once done",
                "parameters": [ABLATION_ID],
                "responses": {
                    "200": {
                        "description": "done: the ablation report",
                        "content": json_content({"type": "object"}),
                    },
                    "202": {
                        "description": "still running: its progress",
                        "content": json_content({"type": "object"}),
                    },
                    "404": error_reply("no such card ablation"),
                    "409": error_reply("the sweep was cancelled or failed, or kept no per-game records"),
                },
            }
        },
    }
)
