"""The broker layout the gateway and the reconciler read by hand is kombu's own."""

from kombu.transport.redis import PRIORITY_STEPS, Channel

from services.runtime.broker import PRIORITY_STEPS as OURS
from services.runtime.broker import SEPARATOR, queue_keys


def test_the_layout_is_kombus() -> None:
    assert list(OURS) == list(PRIORITY_STEPS)
    assert Channel.sep == SEPARATOR
    assert queue_keys("sweeps")[0] == "sweeps"
    assert queue_keys("sweeps")[1:] == [f"sweeps{Channel.sep}{step}" for step in PRIORITY_STEPS[1:]]
