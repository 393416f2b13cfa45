"""Objectives measured on a sweep cell's aggregates: a value, its 95 % interval, a loss, a verdict.

Every objective reads the same cell dict the sweep report shows (`aggregate.py`), so a tune
and a sweep of the same config give the same numbers.

- **Loss** (what the search minimises): the distance from the target in units of its
  half-width; at most 1 means the estimate lies inside the target. For a range [lo, hi] it is
  |value - middle| / half-width, so the search is pulled to the middle of the range rather
  than left on a flat floor where noise decides; for "at most x" (spreads) it is value / x.
- **Verdict** (what the confirmation reports): `confirmed` when the whole 95 % interval lies
  inside the target, `miss` when the estimate itself lies outside, `unproven` otherwise
  (inside, but the games cannot yet tell). Only `confirmed` is a success.
- **Spreads** (highest minus lowest rate) get a conservative interval: from the largest
  gap between two seats' intervals to the widest span of their intervals. It is wider
  than an exact interval, so a spread confirmed here is confirmed a fortiori.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.balance.sweeps.spec import SpecError
from services.engines.core import stats

from .spec import Objective


@dataclass(frozen=True)
class Measure:
    value: float
    lo: float
    hi: float

    def to_dict(self) -> dict[str, float]:
        return {"value": round(self.value, 6), "lo": round(self.lo, 6), "hi": round(self.hi, 6)}


class MissingMetric(SpecError):
    """The games hold no such group (a typo, or a game without that fact): the spec is wrong."""


def _spread(rates: list[dict[str, Any]]) -> Measure:
    if not rates:
        return Measure(0.0, 0.0, 0.0)
    values = [r["rate"] for r in rates]
    return Measure(
        max(values) - min(values),
        max(0.0, max(r["lo"] for r in rates) - min(r["hi"] for r in rates)),
        max(r["hi"] for r in rates) - min(r["lo"] for r in rates),
    )


def measure(obj: Objective, cell: dict[str, Any]) -> Measure:
    """The objective's figure in one cell's aggregates."""
    if obj.metric == "seat_rate":
        seat = cell["seats"][obj.seat]
        return Measure(seat["rate"], seat["lo"], seat["hi"])
    if obj.metric == "seat_spread":
        return _spread(cell["seats"])
    if obj.metric == "group_spread":
        if obj.group not in cell["groups"]:
            known = ", ".join(sorted(cell["groups"])) or "none"
            raise MissingMetric(f"the games have no group {obj.group!r}; groups: {known}")
        return _spread(cell["groups"][obj.group])
    if obj.metric == "mean_length":
        length = cell["length"]
        return Measure(length["mean"], length["lo"], length["hi"])
    for played in cell["played"]:
        if played["label"] == obj.card:
            r = played["play_rate"]
            return Measure(r["rate"], r["lo"], r["hi"])
    lo, hi = stats.wilson(0, cell["games"])  # never played in these games
    return Measure(0.0, lo, hi)


def loss(obj: Objective, m: Measure) -> float:
    lo, hi = obj.target
    if obj.at_most:
        return m.value / hi
    middle, half = (lo + hi) / 2, (hi - lo) / 2
    return abs(m.value - middle) / half


def verdict(obj: Objective, m: Measure) -> str:
    lo, hi = obj.target
    if not lo <= m.value <= hi:
        return "miss"
    if (obj.at_most or lo <= m.lo) and m.hi <= hi:
        return "confirmed"
    return "unproven"


def worst(verdicts: list[str]) -> str:
    """The verdict of several: a miss anywhere is a miss, then unproven, then confirmed."""
    for v in ("miss", "unproven"):
        if v in verdicts:
            return v
    return "confirmed"
