"""Guard rails on every tune: the side effects a config may not buy its objective with.

A tune optimises what it is told, and nothing else: a `seat_spread` target is met just as
well by a game that ends in a draw a third of the time, or lasts ten times longer. So every
tune carries guards, whether its spec names them or not:

| guard | default | holds when |
|---|---|---|
| `draw_rate` | 0.05 | at most 5 % of games end with no winner |
| `cap_rate` | 0.01 | at most 1 % of games reach the turn cap (rulings G-5) |
| `length_change` | 0.25 | the mean game length is within +-25 % of the printed rules' |

A spec overrides a limit (`guards: {draw_rate: 0.1}`) or turns a guard off (`null`); a
guard this list lacks is refused, naming the field. In the search a config breaking a guard
(by its estimate, in any table) is penalised, so the sampler moves away from it, and it is
never chosen as best; on the confirmation games the guards are judged again and reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.balance.sweeps.spec import SpecError

GUARDS = {
    "draw_rate": "share of games that end with no winner, at most the limit",
    "cap_rate": "share of games that reach the turn cap, at most the limit",
    "length_change": "mean game length within +-limit (a fraction) of the printed rules'",
}
DEFAULT_GUARDS = {"draw_rate": 0.05, "cap_rate": 0.01, "length_change": 0.25}


@dataclass(frozen=True)
class Guard:
    """One guard rail: a metric of a cell and its limit."""

    metric: str
    limit: float

    def value(self, cell: Mapping[str, Any], printed: Mapping[str, Any] | None) -> float:
        """The guarded figure of `cell` (a sweep cell's aggregates); the length change is
        relative to the printed rules' cell at the same table (0 without one)."""
        if self.metric == "draw_rate":
            return float(cell["draws"]["rate"])
        if self.metric == "cap_rate":
            return float(cell["capped"]["rate"])
        if printed is None or not printed["length"]["mean"]:
            return 0.0
        return cell["length"]["mean"] / printed["length"]["mean"] - 1.0

    def holds(self, value: float) -> bool:
        if self.metric == "length_change":
            return abs(value) <= self.limit
        return value <= self.limit

    def excess(self, value: float) -> float:
        """How far past its limit, as a share of the limit (0 when it holds)."""
        over = abs(value) - self.limit if self.metric == "length_change" else value - self.limit
        return max(0.0, over) / self.limit if self.limit else float(over > 0)

    def words(self) -> str:
        if self.metric == "length_change":
            return f"mean length within {100 * self.limit:.0f}% of the printed rules'"
        what = "draws" if self.metric == "draw_rate" else "games reaching the turn cap"
        return f"{what} at most {100 * self.limit:.1f}%"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "limit": self.limit}


def parse_guards(value: Mapping[str, Any] | None) -> tuple[Guard, ...]:
    """The defaults with the spec's overrides: a number replaces a limit, None turns the
    guard off; an unknown guard or a limit that is not a positive number is refused
    (SpecError naming `guards.<name>`)."""
    limits: dict[str, float | None] = dict(DEFAULT_GUARDS)
    for name, limit in (value or {}).items():
        if name not in GUARDS:
            raise SpecError(f"unknown guard {name!r}; guards are {', '.join(GUARDS)}", field=f"guards.{name}")
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit <= 0
        ):
            raise SpecError(
                f"guard {name} takes a positive number (or null to turn it off), got {limit!r}",
                field=f"guards.{name}",
            )
        limits[name] = None if limit is None else float(limit)
    return tuple(Guard(name, limit) for name, limit in limits.items() if limit is not None)


def guards_to_dict(guards: tuple[Guard, ...]) -> dict[str, float | None]:
    """The spec form: every guard with its limit, None for one turned off."""
    on = {g.metric: g.limit for g in guards}
    return {name: on.get(name) for name in GUARDS}


def check(
    guards: tuple[Guard, ...], cells: list[dict[str, Any]], printed: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Every guard at every table: its value, limit and whether it holds. `printed` is the
    printed rules' cells in the same table order (for the length guard)."""
    out = []
    for i, cell in enumerate(cells):
        base = printed[i] if printed and i < len(printed) else None
        for g in guards:
            v = g.value(cell, base)
            out.append(
                {
                    "guard": g.metric,
                    "table": cell["label"],
                    "value": round(v, 6),
                    "limit": g.limit,
                    "holds": g.holds(v),
                    "excess": round(g.excess(v), 6),
                    "text": g.words(),
                }
            )
    return out


def broken(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if not c["holds"]]


def penalty(checks: list[dict[str, Any]]) -> float:
    """What breaking guards adds to a config's score: 1 per broken guard plus how far past
    its limit, so the sampler learns both that and how badly it broke them."""
    return sum(1.0 + c["excess"] for c in broken(checks))
