"""Play in the browser: the lobby, table and replay pages (issue 7).

Plain server-rendered HTML (Jinja templates in `services/gateway/templates/`) with a little
vanilla JavaScript (`services/gateway/static/`); no front-end toolchain. The pages hold no
rules and no state of their own: a table page renders the match API's view of the browser's
seat (the engine's redacted view, through `TableService.view`), and its script only posts
the action ids the view offers, follows the table's server-sent events and asks for the
panel again. Seat tokens stay in the browser (localStorage, one key per table and seat);
they travel in the `X-Seat-Token` header, never in a URL.

Routes (none under /api, so they are not part of the OpenAPI document):

- `/`                    the lobby: games, open and live tables, open a table, matchmaking
- `/lobby/tables`        the tables lists as an HTML fragment (the lobby refreshes it)
- `/tables/<id>`         the table page
- `/tables/<id>/panel`   the table as the token's seat (or a spectator) sees it, a fragment
- `/replay`              a finished table (`?table=`) or a sweep's game (`?game=&seed=...`)
- `/replay/panel`        one step of a replay, from one seat, a spectator or all seats
- `/account`             the browser's player: upgrade a guest, sign in on another device
- `/games/<game>/how-to-play`, `/cards/<game>/...svg`   learning the game (learn.py)
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import orjson
from flask import Blueprint, Response, current_app, redirect, render_template, request, url_for
from pydantic import ConfigDict, Field

from services.engines.core.messages import load_messages
from services.gateway.context import current
from services.platform.context import Platform
from services.platform.errors import PlatformError

from ..auth import player_id
from ..errors import bearer_token
from ..lobby_api import Cursor, page_at
from ..schemas import Body, validate
from .ending import ending
from .history import PastStates, last_move, last_trick, past_move, sentence, upto
from .learn import register as register_learning
from .present import display_names, register_filters
from .replay import Replay, Replays, view_json

bp = Blueprint(
    "pages",
    __name__,
    template_folder="../templates",
    static_folder="../static",
    static_url_path="/static",
)
register_filters(bp)
bp.add_app_template_global(sentence, "move_sentence")
register_learning(bp)  # How to play, the card pictures, tips and the guided turn (learn.py)

OPENAPI_PATHS: dict[str, Any] = {}  # pages are HTML, not API: nothing to document


def replays() -> Replays:
    """The process's replay finder and its cache, made on first use."""
    found = current_app.extensions.get("cultists.replays")
    if found is None:
        gw = current()
        found = current_app.extensions["cultists.replays"] = Replays(
            gw.tables, gw.engines.games, build_seconds=gw.settings.replay_build_seconds
        )
    return found


def _page_error(exc: PlatformError) -> tuple[str, int]:
    """A page (not a fragment) that fails says so in HTML, with the API's code and words."""
    return render_template("error.html", error=exc), exc.status


def _games(gw: Platform) -> list[dict[str, Any]]:
    out = []
    for game in gw.engines.games:
        try:
            out.append(gw.engines.description_json(game))
        except PlatformError as exc:  # an engine that is down hides its game, not the lobby
            out.append({"game": game, "title": game, "unavailable": exc.message})
    return out


@bp.get("/")
def lobby():
    gw = current()
    try:
        lists = _tables_lists(gw)
    except PlatformError as exc:  # a bad place in a list: said where the lists would be
        return render_template("lobby.html", games=_games(gw), tables_error=exc), exc.status
    return render_template("lobby.html", games=_games(gw), **lists)


LOBBY_PAGE = 50  # tables in one page of each list, as the API's default page


class ListsQuery(Body):
    """Where each lobby list is: the API's `cursor` (a page's `next` or `previous`) per
    list, so a page of the lobby is a page of `GET /api/tables`."""

    model_config = ConfigDict(strict=False)  # query strings are text; other keys ignored

    waiting: Cursor | None = Field(None, description="the waiting list's `cursor`")
    playing: Cursor | None = Field(None, description="the playing list's `cursor`")


def _tables_lists(gw: Platform) -> dict[str, Any]:
    """Both lists at the places the query string names (first pages by default), each
    through the API's one paging read, with links to the pages around them."""
    query = validate(ListsQuery, request.args.to_dict())
    here = {k: v for k, v in query.model_dump().items() if v is not None}
    out: dict[str, Any] = {}
    for status in ("waiting", "playing"):
        page, previous = page_at(gw.store, status, LOBBY_PAGE, getattr(query, status))
        others = {k: v for k, v in here.items() if k != status}  # the other list stays
        out[status] = [t.summary() for t in page.tables]
        out[f"{status}_pages"] = {
            "total": page.total,
            "next": _lists_url(others | {status: page.next}) if page.next else None,
            "previous": _lists_url(others | {status: previous}) if previous else None,
            "first": _lists_url(others) if status in here else None,
        }
    out["titles"] = {g: _title(gw, g) for g in {t["game"] for t in out["waiting"] + out["playing"]}}
    return out


def _lists_url(args: dict[str, str]) -> str:
    """The lobby at these places in its lists, scrolled to the lists."""
    return url_for("pages.lobby") + (f"?{urlencode(args)}" if args else "") + "#tables"


def _title(gw: Platform, game: str) -> str:
    try:
        return gw.engines.describe(game).title
    except PlatformError:  # engine down: the machine name still says which game it is
        return game


@bp.get("/lobby/tables")
def lobby_tables():
    """The lists as the lobby shows them, at the places its query string names (the
    lobby's script asks with its own query string, so a refresh stays on its page)."""
    try:
        return render_template("lobby_tables.html", **_tables_lists(current()))
    except PlatformError as exc:
        return render_template("lobby_tables.html", tables_error=exc), exc.status


@bp.get("/tables/<table_id>")
def table_page(table_id: str):
    gw = current()
    try:
        table = gw.tables.get(table_id)
    except PlatformError as exc:
        return _page_error(exc)
    return render_template("table.html", table=table.summary(), title=_title(gw, table.game))


@bp.get("/tables/<table_id>/panel")
def table_panel(table_id: str):
    """The table as the token's seat sees it. Reads the view first: its version is the one
    the action buttons carry, so a move is always chosen at the version it was shown at.

    `?at=V` gives the position at an earlier version V instead (no buttons), with the move
    that led there, so the page can play a burst of moves out one at a time (`history.py`)."""
    gw = current()
    token = bearer_token()
    if request.args.get("at") is not None:
        return _past_panel(gw, table_id, token)
    table, view = gw.tables.look(table_id, token, player_id())
    return render_template(
        "panel.html",
        game=table.game,
        table=table.summary(),
        live=view,
        v=view["view"],
        me=view["seat"],
        names=display_names(table.seats),
        now=time.time(),
        move=last_move(gw.store, past_states(), table) if table.version > 0 else None,
        past=False,
        ending=ending(gw, table, display_names(table.seats), view["seat"])
        if table.status == "finished"
        else None,
        last_trick=last_trick(table.game, view["view"], upto(gw.store.log_tail(table.id, 40), table.version)),
    )


class PastQuery(Body):
    model_config = ConfigDict(strict=False)  # query strings are text

    at: int = Field(ge=0, description="an earlier version of the table")


class StepQuery(Body):
    model_config = ConfigDict(strict=False)

    step: int = Field(0, ge=0, description="the position shown (0: the deal)")


def _past_panel(gw: Platform, table_id: str, token: str | None) -> str:
    version = validate(PastQuery, request.args.to_dict()).at
    table = gw.tables.get(table_id)
    seat = -1 if token is None else gw.tables.seat_of(table, token, player_id())
    if version > table.version:
        raise PlatformError(404, "unknown_version", f"this table is at version {table.version}")
    state, move = past_move(gw.store, past_states(), table, version)
    view = view_json(load_messages(table.game), state, seat, legal=False)
    live = {**view, "table": table.id, "version": version, "status": "playing", "deadlines": {}}
    if view["terminal"]:
        live["status"] = "finished"
    return render_template(
        "panel.html",
        game=table.game,
        table=table.summary(),
        live=live,
        v=view["view"],
        me=seat,
        names=display_names(table.seats),
        now=time.time(),
        move=move,
        past=True,
        ending=ending(gw, table, display_names(table.seats), seat) if view["terminal"] else None,
        last_trick=last_trick(table.game, view["view"], upto(gw.store.log(table.id), version)),
    )


def past_states() -> PastStates:
    """The process's cache of rebuilt earlier positions, made on first use."""
    found = current_app.extensions.get("cultists.past")
    if found is None:
        found = current_app.extensions["cultists.past"] = PastStates()
    return found


@bp.get("/account")
def account_page():
    """Who this browser plays as; a guest's upgrade to a username and password, and
    signing in with one on another device (all through the players API, in account.js)."""
    return render_template("account.html")


REPLAYS_LISTED = 50


@bp.get("/replays")
def replays_page():
    """Recently finished games, newest first, filtered by game and by a player's name; each
    opens its replay (autoplaying)."""
    gw = current()
    game = request.args.get("game", "")
    player = request.args.get("player", "").strip()
    rows = []
    for table, ended in gw.store.finished(500):
        if game and table.game != game:
            continue
        names = display_names(table.seats)
        if player and not any(player.lower() in (s.player or "").lower() for s in table.seats):
            continue
        rows.append({"table": table.summary(), "names": names, "ended": ended})
        if len(rows) >= REPLAYS_LISTED:
            break
    return render_template(
        "replays.html",
        rows=rows,
        games=_games(gw),
        titles={g["game"]: g["title"] for g in _games(gw)},
        game=game,
        player=player,
        now=time.time(),
    )


@bp.get("/replay")
def replay_page():
    if not request.args:  # the list of finished games is the way in
        return redirect(url_for("pages.replays_page"))
    try:
        replay = replays().get(request.args)
        seat, _ = replay.seats_for(request.args.get("seat"))
        step = _step_arg(replay)
    except PlatformError as exc:
        return _page_error(exc)
    return render_template(
        "replay.html",
        replay=replay,
        summary=replay.summary(),
        source_json=orjson.dumps(replay.source.query()).decode(),
        step=step,
        seat=seat,
    )


def _step_arg(replay: Replay) -> int:
    step = validate(StepQuery, request.args.to_dict()).step
    if step > replay.steps:
        raise PlatformError(404, "unknown_step", f"this replay has steps 0-{replay.steps}")
    return step


@bp.get("/replay/panel")
def replay_panel():
    replay = replays().get(request.args)
    seat, seats = replay.seats_for(request.args.get("seat"))
    step = _step_arg(replay)
    all_open = seat == "all"
    state = replay.state_at(step)
    shown = [-1, *seats] if all_open else seats
    views = {s: replay.view_json(state, s) for s in shown}
    following = replay.moves[step] if step < replay.steps else None
    move = replay.moves[step - 1] if step > 0 else None
    chooser = following.seat if following else None
    # What this view may read: all cards open reads everything; a seat reads its own moves
    # and choices; the public words of other moves only (the spectator view shows no hand).

    def mine(m: Any) -> bool:
        return all_open or (m is not None and seat == str(m.seat))

    choices = (
        replay.view_json(state, chooser)["legal_actions"] if chooser is not None and mine(following) else []
    )
    return render_template(
        "replay_panel.html",
        game=replay.spec.name,
        replay=replay,
        step=step,
        seat=seat,
        seats=seats,
        views=views,
        board=views[-1] if all_open else views[seats[0]],
        move=move,
        move_open=move is not None and (move.public or mine(move)),
        next_open=following is not None and (following.public or mine(following)),
        events=replay.events[step],
        following=following,
        choices=choices,
        names=replay.seat_names,
    )


@bp.after_request
def _no_store(response: Response) -> Response:
    """Fragments change with every move and pages carry nothing secret, but a cached
    panel would show a stale position: tell browsers not to keep them."""
    if response.mimetype == "text/html":
        response.headers["Cache-Control"] = "no-store"
    return response
