"""Moved: the statistics live in `services.engines.core.stats`, shared with the ladder.

This name stays only so code written against the old path keeps importing; new code
imports `services.engines.core.stats` directly.
"""

from services.engines.core.stats import *  # noqa: F403
