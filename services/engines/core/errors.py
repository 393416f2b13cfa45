"""Errors the rules library raises.

Each one maps to exactly one outward status (gRPC code, HTTP status), so the layers above
never guess: a bad config or unreadable state is the caller's malformed input, an illegal
action is a well-formed request that the position does not allow.
"""


class EngineError(ValueError):
    """Base of every error the rules library raises on purpose."""


class BadConfig(EngineError):
    """The config names an unknown field or holds a value of the wrong kind or range."""


class BadState(EngineError):
    """Serialised state that cannot be read back into a consistent position."""


class IllegalAction(EngineError):
    """An action that is not legal for that seat now; the message says why in words."""


class SearchStopped(TimeoutError):
    """A bot's search was told to stop before its budget ran out: the caller's deadline
    passed, the call was cancelled, or the engine is shutting down. Not the caller's
    malformed input (so not an EngineError): nobody is waiting for the answer any more,
    and the search must not spend another millisecond of CPU on it."""
