"""The one refusal every live-play and balance operation raises: a status, a code, words.

The status speaks HTTP's vocabulary (400 bad input, 409 a lost race, 503 an outage)
because every caller maps onto it: the gateway answers it as it is, in its one error shape
(`services/gateway/errors.py`), and a Celery task or the CLI reads the code. Nothing that
raises it has changed anything: each operation checks everything before its one atomic
write.
"""

from __future__ import annotations

from typing import Any

# Seconds a client is asked to wait after a 503: about what `cultists run` needs to
# restart a part, and what an orchestrator needs to reschedule a pod's first retry.
RETRY_AFTER_SECONDS = 2


class PlatformError(Exception):
    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
