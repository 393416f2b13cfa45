"""Who sent this request: the player session (`X-Player-Token`), for the API modules.

Seat and ticket tokens keep their own header (`Authorization: Bearer` / `X-Seat-Token`,
errors.bearer_token), so a client holds a seat and a session side by side. A session that
is presented must be live: an expired or revoked one is 401, never silently anonymous.
"""

from __future__ import annotations

from flask import g, request

from services.gateway.context import current
from services.platform.errors import PlatformError
from services.platform.players import SESSION_HEADER, Player


def session_token() -> str | None:
    return request.headers.get(SESSION_HEADER) or None


def current_player(required: bool = False) -> Player | None:
    """The signed-in player, None for an anonymous request (401 if `required`)."""
    if "player" in g:
        found = g.player
    else:
        token = session_token()
        found = None
        if token is not None:
            found = current().players.by_session(token)
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
