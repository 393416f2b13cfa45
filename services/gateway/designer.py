"""/designer: a game designer's page: tunes and sweeps in progress, their reports, and the
nightly balance history per game (drift flags, seat win rates night after night).

Tunes and sweeps come from the public API (`/api/tunes`, `/api/sweeps`), which the page's
script asks every few seconds, so percentages move by themselves. The nightly history is
read from the stored nights (`services/balance/sweeps/night.py`'s archive: the folder `cultists
nightly` and the beat's nightly job write, `CULTISTS_NIGHTLY_DIR` or the platform's data
folder), which the gateway must be able to read: under `cultists run` it is the same
folder; docker-compose.yml and deploy/k8s mount the workers' data volume into the gateway
read-only.

Routes (not under /api, so not in the OpenAPI document):

- `/designer`                 the page
- `/designer/data/nightly`    per game: each stored night's drift flags, and every cell's
                              seat win rates across the nights (`?nights=` the last N, 30)
"""

from __future__ import annotations

import gzip
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from flask import Blueprint, render_template, request
from pydantic import ConfigDict, Field

from services.balance.sweeps.night import NightArchive, nightly_dir

from .auth import require_role
from .ops_dashboards import game_title
from .schemas import Body, validate

bp = Blueprint("designer", __name__, template_folder="templates")

OPENAPI_PATHS: dict[str, Any] = {}  # a page and its own data, not the public API

MAX_NIGHTS = 120
# A stored night never changes, so what a night's files say is kept per process: the page
# refreshes without decompressing every night again. Keyed by folder, night and game.
_seats_cache: dict[tuple[str, str, str], dict[str, list[float]]] = {}
_cache_lock = threading.Lock()


def _night_time(night_id: str) -> float | None:
    """A night id is its UTC timestamp (`20261130T020000123456Z`, maybe `-preview`)."""
    try:
        return datetime.strptime(night_id.split("-")[0], "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _seat_rates(root: Path, night_id: str, game: str) -> dict[str, list[float]]:
    """cell label -> each seat's win rate, from one stored night of one game."""
    cache_key = (str(root), night_id, game)
    with _cache_lock:
        found = _seats_cache.get(cache_key)
    if found is not None:
        return found
    try:
        data = orjson.loads(gzip.decompress((root / night_id / f"{game}.json.gz").read_bytes()))
    except (OSError, ValueError):
        return {}
    rates = {cell["label"]: [s["rate"] for s in cell["seats"]] for cell in data["aggregates"]["cells"]}
    with _cache_lock:
        if len(_seats_cache) > 4096:
            _seats_cache.clear()
        _seats_cache[cache_key] = rates
    return rates


def nightly_history(root: Path, last: int) -> dict[str, Any]:
    """Per game: the last `last` stored nights (previews left out: they are what-ifs), each
    with its drift flags, and per cell the seat win rates night by night (None where a
    night lacks the cell)."""
    archive = NightArchive(root)
    ids = [n for n in archive.night_ids() if not n.endswith("-preview")][-last:]
    games: dict[str, Any] = {}
    for night_id in ids:
        try:
            info = orjson.loads((root / night_id / "night.json").read_bytes())
            drift = orjson.loads((root / night_id / "drift.json").read_bytes())
        except (OSError, ValueError):
            continue
        for game in info.get("games", []):
            part = drift.get("games", {}).get(game, {})
            entry = games.setdefault(game, {"title": game_title(game), "nights": [], "cells": {}})
            index = len(entry["nights"])
            entry["nights"].append(
                {
                    "night": night_id,
                    "time": _night_time(night_id),
                    "games_per_cell": info.get("games_per_cell"),
                    "compared": part.get("compared", 0),
                    "previous_night": part.get("previous_night"),
                    "drifted": [
                        {
                            k: d.get(k)
                            for k in ("cell", "metric", "before", "after", "difference", "p_adjusted")
                        }
                        for d in part.get("drifted", [])
                    ],
                }
            )
            for label, rates in _seat_rates(root, night_id, game).items():
                series = entry["cells"].setdefault(label, [])
                for seat, rate in enumerate(rates):
                    while len(series) <= seat:
                        series.append([None] * index)
                    series[seat].append(rate)
            for series in entry["cells"].values():  # cells missing tonight: a gap
                for seat_series in series:
                    seat_series.extend([None] * (index + 1 - len(seat_series)))
    return {"folder": str(root), "games": games}


@bp.get("/designer")
def page():
    """The page itself, for anyone: an empty frame; its tunes, sweeps and nights come from
    designer-only routes the page's script asks with the designer's session."""
    return render_template("designer.html")


class NightlyQuery(Body):
    model_config = ConfigDict(strict=False)  # query strings are text

    nights: int = Field(30, ge=1, le=MAX_NIGHTS, description="the latest nights, oldest first")


@bp.get("/designer/data/nightly")
def nightly():
    """Designers and operators: the stored nights' drift flags and seat win rates."""
    require_role("designer")
    return nightly_history(nightly_dir(), validate(NightlyQuery, request.args.to_dict()).nights)
