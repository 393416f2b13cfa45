"""Learning the games in the page (issue 31, items 1 and 3): the How-to-play pages, the card
faces and backs as SVG, and the template helpers that give every card, cult, agenda and
counter on a table its explanation.

Every word and colour comes from the game's own `guide.py`, which its presentation carries
(`GameSpec.presentation.guide`, read through `present.presentation`); this module only
renders them, the same way for every game (the gateway holds no per-game
table). All routes are anonymous and read-only; the SVG routes draw from a bounded set
(the guide's faces, or a Tricky-Cultists-style card object of short, checked fields), so
they cost a few string joins and are cached by the browser.

- `/games/<game>/how-to-play`  the rules for players; `?table=<id>`: with that table's
                               optional rules and changed settings marked
- `/cards/<game>/<key>.svg`    a card face by the engine's name for it
- `/cards/<game>/card.svg`     a card face from its fields (`suit`, `rank`, `value`, `name`)
- `/cards/<game>/back.svg`     the game's card back
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from flask import Blueprint, Response, render_template, request, url_for

from services.engines.core.guide import Face, Guide
from services.gateway.context import current
from services.platform.errors import PlatformError

from .faces import back_svg, face_svg
from .present import presentation

SVG_CACHE = "public, max-age=3600"  # faces change only with a deploy
_FIELD_LIMIT = 32  # the longest value a face field may carry in a URL


def guide_of(game: str) -> Guide:
    """The game's guide; 404 for a name no installed game has, or a game that brings none."""
    guide = presentation(game).guide
    if guide is None:
        raise PlatformError(404, "unknown_game", f"no guide for a game named {game!r}", field="game")
    return guide


def _svg(body: str) -> Response:
    response = Response(body, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = SVG_CACHE
    return response


# -- the pictures ---------------------------------------------------------------------------
def card_back(game: str):
    """Anonymous: the game's card back (hidden hands, decks)."""
    return _svg(back_svg(guide_of(game)))


def card_from_fields(game: str):
    """Anonymous: a face made from a card's fields, for games whose views carry cards as
    objects (Tricky Cultists). Each field is bounded and the suit must be the game's."""
    guide = guide_of(game)
    fields = {k: request.args.get(k, "") for k in ("suit", "rank", "value", "name")}
    bad = next((k for k, v in fields.items() if len(v) > _FIELD_LIMIT), None)
    if guide.face_of_object is None or bad is not None:
        raise PlatformError(400, "malformed", "this game's cards are drawn by name", field=bad or "game")
    for number in ("rank", "value"):
        if not fields[number].lstrip("-").isdigit():
            raise PlatformError(400, "malformed", f"{number} must be a whole number", field=number)
    face = guide.face_of_object(fields)
    if face.family not in guide.scheme or face.family in ("plain", "back"):
        raise PlatformError(404, "unknown_card", f"no suit named {fields['suit']!r}", field="suit")
    return _svg(face_svg(guide, face))


def card_face(game: str, key: str):
    """Anonymous: a card face by the engine's name for the card."""
    guide = guide_of(game)
    face = guide.face(key)
    if face is None:
        raise PlatformError(404, "unknown_card", f"{guide.title} has no card named {key!r}", field="key")
    return _svg(face_svg(guide, face))


def face_url(game: str, card: Any) -> str:
    """Where a card's face is drawn: by name, or from an object card's own fields."""
    if isinstance(card, Mapping):
        query = {k: card.get(k, "") for k in ("suit", "rank", "value", "name")}
        return f"{url_for('pages.card_from_fields', game=game)}?{urlencode(query)}"
    return url_for("pages.card_face", game=game, key=str(card))


def card_face_of(game: str, card: Any) -> Face | None:
    try:
        return guide_of(game).face(card)
    except PlatformError:
        return None


def tip(game: str, key: Any) -> str:
    """The explanation of a counter, zone, cult or agenda on the table ("" if none)."""
    try:
        return guide_of(game).tips.get(str(key), "")
    except PlatformError:
        return ""


# -- How to play ----------------------------------------------------------------------------
def how_to_play(game: str):
    """Anonymous: the game's rules written for players; with `?table=<id>`, the optional
    rules and changed settings of that table marked."""
    try:
        guide = guide_of(game)
    except PlatformError as exc:  # a page: the error in HTML
        return render_template("error.html", error=exc), exc.status
    gw = current()
    table_id = request.args.get("table", "")
    config: dict[str, Any] | None = None
    changed: list[dict[str, Any]] = []
    try:
        defaults = gw.engines.description_json(game)["default_config"]
    except PlatformError:  # an engine that is down still leaves the rules readable
        defaults = {}
    table = None
    if table_id:
        try:
            table = gw.tables.get(table_id)
        except PlatformError as exc:
            return render_template("error.html", error=exc), exc.status
        if table.game != game:
            other = PlatformError(404, "unknown_table", f"table {table_id} plays another game", field="table")
            return render_template("error.html", error=other), other.status
        config = {**defaults, **table.config}
        changed = [
            {"field": k, "value": v, "default": defaults.get(k)}
            for k, v in sorted(table.config.items())
            if defaults.get(k) != v
        ]
    options = [
        {"name": o.name, "text": o.text, "on": None if config is None else o.applies(config)}
        for o in guide.options
    ]
    return render_template(
        "how_to_play.html",
        guide=guide,
        game=game,
        table=table.summary() if table is not None else None,
        options=options,
        changed=changed,
    )


def coach_for(game: str, view: Mapping[str, Any], seat: int) -> tuple[str, str] | None:
    """The guided first turn: (what to do now, why) for this seat's decision, or None."""
    try:
        return guide_of(game).advice(view, seat)
    except PlatformError:
        return None


def _install(state: Any) -> None:
    env = state.app.jinja_env
    env.globals.update(face_url=face_url, card_face_of=card_face_of, game_tip=tip, coach_for=coach_for)


def register(bp: Blueprint) -> None:
    """Adds these routes to the pages blueprint (so their endpoints are `pages.*`) and the
    template helpers to the app it is registered on. The back comes before `<key>.svg`."""
    bp.add_url_rule("/cards/<game>/back.svg", view_func=card_back, methods=["GET"])
    bp.add_url_rule("/cards/<game>/card.svg", view_func=card_from_fields, methods=["GET"])
    bp.add_url_rule("/cards/<game>/<key>.svg", view_func=card_face, methods=["GET"])
    bp.add_url_rule("/games/<game>/how-to-play", view_func=how_to_play, methods=["GET"])
    bp.record_once(_install)
