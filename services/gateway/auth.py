"""Who sent this request: the player session (`X-Player-Token`), for the API modules.

Seat and ticket tokens keep their own header (`Authorization: Bearer` / `X-Seat-Token`,
errors.bearer_token), so a client holds a seat and a session side by side. A session that
is presented must be live: an expired or revoked one is 401, never silently anonymous.
"""

from __future__ import annotations

from flask import current_app, g, request

from services.platform.errors import PlatformError
from services.platform.players import SESSION_HEADER, Player, PlayerBook
from services.platform.read_links import PARAM, ReadLinks


def session_token() -> str | None:
    return request.headers.get(SESSION_HEADER) or None


def players() -> PlayerBook:
    """The platform's player book; a bare app serving only the balance blueprints (their
    tests) reads the players from the sweeps' Redis."""
    platform = current_app.extensions.get("cultists")
    if platform is not None:
        return platform.players
    book = current_app.extensions.get("cultists.players")
    if book is None:
        from .balance_clients import balance_clients

        book = current_app.extensions["cultists.players"] = PlayerBook(balance_clients().store.r, 0)
    return book


def current_player(required: bool = False) -> Player | None:
    """The signed-in player, None for an anonymous request (401 if `required`)."""
    if "player" in g:
        found = g.player
    else:
        token = session_token()
        found = None
        if token is not None:
            found = players().by_session(token)
            if found is None:
                raise PlatformError(
                    401, "session_expired", "that player session expired or was revoked; sign in again"
                )
        g.player = found
    if found is None and required:
        raise PlatformError(
            401,
            "sign_in_required",
            f"this needs a player session ({SESSION_HEADER}); a guest one is a POST /api/players/guest away",
        )
    return found


def player_id() -> str | None:
    """The signed-in player's id, or None: what a seat bound to a player is checked against."""
    found = current_player()
    return found.id if found is not None else None


def require_role(role: str) -> Player:
    """The signed-in player if they hold `role` (players.ROLES): 401 without a session, 403
    `forbidden` for a guest or an account without it. What every designer and operator
    route calls first, before it reads or plans anything."""
    player = current_player(required=True)
    assert player is not None
    if not player.has(role):
        raise PlatformError(
            403,
            "forbidden",
            f"this needs the {role!r} role; an operator grants it (`cultists admin grant NAME {role}`)",
            role=role,
        )
    return player


def may_manage(owner: str | None) -> Player:
    """A designer who may cancel work owned by `owner`: its owner, or any operator."""
    player = require_role("designer")
    if player.id != owner and not player.has("operator"):
        raise PlatformError(403, "not_owner", "only its owner or an operator may cancel it", role="operator")
    return player


def _read_links() -> ReadLinks:
    links = current_app.extensions.get("cultists.read_links")
    if links is None:
        links = current_app.extensions["cultists.read_links"] = ReadLinks(players().redis)
    return links


def signed(path: str, prefix: str) -> str:
    """`path` with a read key for everything under `prefix` (read_links.py says why)."""
    return f"{path}?{PARAM}={_read_links().sign(prefix)}"


def require_reader(prefix: str) -> None:
    """A designer's session, or a signed read link for `prefix` (a report the designer's
    browser opens by following a link)."""
    if _read_links().valid(prefix, request.args.get(PARAM)):
        return
    require_role("designer")
