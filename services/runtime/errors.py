"""Failures the command line expects, each with the exit status it prints them with.

Raised by the process helpers (a busy port, a data folder another run holds, no running
platform to talk to) and by the CLI's own checks; `cultists` turns each into one line on
standard error and its exit status (services/cli/main.py), never a traceback. The message
names the cause and the fix.
"""

from __future__ import annotations

BAD_INPUT = 2
UNREACHABLE = 3


class CommandError(Exception):
    """Base of the expected failures; `status` is the process exit status."""

    status = BAD_INPUT


class BadInput(CommandError):
    """What was asked cannot be done as given: a bad flag, file, record or port."""

    status = BAD_INPUT


class Unreachable(CommandError):
    """Something the command needs does not answer, or cannot be found: run it again once
    it is there (nothing was changed)."""

    status = UNREACHABLE
