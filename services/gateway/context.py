"""The platform a request is served by: one per gateway process, kept by the Flask app."""

from __future__ import annotations

from flask import current_app

from services.platform.context import Platform


def current() -> Platform:
    """The Platform of the app handling this request."""
    return current_app.extensions["cultists"]
