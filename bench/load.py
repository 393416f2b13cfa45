"""The machine's load, as every bench section records it beside its figures: machines
here are noisy, so a figure is read with the load it was measured under."""

from __future__ import annotations

import os


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages, to two places."""
    return [round(x, 2) for x in os.getloadavg()]
