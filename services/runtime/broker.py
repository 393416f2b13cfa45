"""Where a Celery queue's messages wait in a Redis broker, read without Celery or kombu.

Queue depth is a fact the gateway's /metrics and the sweep reconciler read straight from
Redis. kombu's Redis transport keeps one list per priority step of a queue: the queue's
own name for step 0, then `<queue>\\x06\\x16<step>`. Written out here so that the layers
below the workers need no Celery import for it; tests/runtime/test_broker.py holds it
equal to kombu's own constants, so an upgrade that changed them fails a test.
"""

from __future__ import annotations

PRIORITY_STEPS = (0, 3, 6, 9)
SEPARATOR = "\x06\x16"


def queue_keys(queue: str) -> list[str]:
    """Every list a queue's waiting messages sit in, most urgent first."""
    return [f"{queue}{SEPARATOR}{step}" if step else queue for step in PRIORITY_STEPS]


def priority_key(queue: str, step: int) -> str:
    """The list where `queue`'s messages of priority `step` (one of PRIORITY_STEPS) wait."""
    if step not in PRIORITY_STEPS:
        raise ValueError(f"a priority step is one of {PRIORITY_STEPS}")
    return f"{queue}{SEPARATOR}{step}" if step else queue
