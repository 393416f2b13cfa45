"""A tune spec: which rules to search, for what, with how many games; refused early if wrong.

A tune is a search over rule configs for one that meets a designer's targets. The table it
plays at (game, player counts, line-ups, fixed config, turn cap, chunk size) is written as in
a sweep spec and checked by the sweep parser (`workers/sweeps/spec.py`), so anything a sweep
refuses a tune refuses with the same words. On top of that:

    search:                        # the config fields to search
      threshold: {low: 8, high: 14}          # whole numbers (step 1 unless `step`)
      starting_hand: [1, 2, 3]               # choices (any kind)
    objectives:                    # what "fair" means here, each with its target
      - {metric: seat_rate, seat: 0, target: [0.45, 0.55]}
      - {metric: seat_spread, target: 0.05}              # max - min of seat win rates
      - {metric: group_spread, group: cult, target: 0.05}
      - {metric: mean_length, target: [20, 40]}
      - {metric: play_rate, card: Counter-Spell, target: [0.1, 0.5]}
    budget: 20000                  # games the search may spend (confirmation not included)
    racing: {games: 100, eta: 3, rungs: 3, batch: 9}   # successive halving (search.py)
    confirm: 2000                  # games on fresh seeds for the proof (confirm.py)
    sampler: tpe                   # tpe (one objective), nsga2 (several), random
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.engines.core.config import _field_types
from workers.sweeps.spec import (
    MAX_TOTAL_GAMES,
    SpecError,
    SweepSpec,
    parse_spec,
    read_spec_file,
    whole_field,
)

SWEEP_KEYS = ("name", "game", "seed", "players", "max_turns", "config", "lineups", "chunk")
KEYS = {*SWEEP_KEYS, "search", "objectives", "budget", "racing", "confirm", "sampler", "trials"}
METRICS = {
    "seat_rate": "a seat's win rate within a range",
    "seat_spread": "highest minus lowest seat win rate, at most the target",
    "group_spread": "highest minus lowest win rate of a group's labels (cult, team), at most the target",
    "mean_length": "mean game length in turns within a range",
    "play_rate": "share of games in which a card is played, within a range",
}
AT_MOST = {"seat_spread", "group_spread"}
SAMPLERS = ("tpe", "nsga2", "random")
RACING_DEFAULTS = {"games": 100, "eta": 3, "rungs": 3, "batch": 9}


@dataclass(frozen=True)
class Param:
    """One searched config field: a whole-number or float range, or a list of choices."""

    name: str
    kind: str  # "int", "float" or "choice"
    low: float | None = None
    high: float | None = None
    step: int = 1
    choices: tuple[Any, ...] = ()

    def describe(self) -> str:
        if self.kind == "choice":
            return f"{self.name} in {list(self.choices)}"
        return f"{self.name} in {self.low}..{self.high}"


@dataclass(frozen=True)
class Objective:
    """A measured figure and its target: a range [lo, hi], or at most `hi` (lo = 0)."""

    metric: str
    target: tuple[float, float]
    seat: int = 0
    group: str = ""
    card: str = ""

    @property
    def at_most(self) -> bool:
        return self.metric in AT_MOST

    @property
    def label(self) -> str:
        return {
            "seat_rate": f"seat {self.seat} win rate",
            "seat_spread": "seat win-rate spread",
            "group_spread": f"{self.group} win-rate spread",
            "mean_length": "mean game length",
            "play_rate": f"play rate of {self.card}",
        }[self.metric]

    @property
    def is_rate(self) -> bool:
        return self.metric != "mean_length"

    def target_words(self) -> str:
        lo, hi = self.target
        if self.at_most:
            return f"at most {_fmt(self, hi)}"
        return f"{_fmt(self, lo)}-{_fmt(self, hi)}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.metric}
        if self.metric == "seat_rate":
            out["seat"] = self.seat
        if self.group:
            out["group"] = self.group
        if self.card:
            out["card"] = self.card
        out["target"] = self.target[1] if self.at_most else list(self.target)
        return out


def _fmt(obj: Objective, value: float) -> str:
    return f"{100 * value:.1f}%" if obj.is_rate else f"{value:.1f} turns"


@dataclass(frozen=True)
class TuneSpec:
    """A validated tune; `to_dict()` parses back to it."""

    table: SweepSpec  # game, seed, players, line-ups and fixed config: the sweep part
    params: tuple[Param, ...]
    objectives: tuple[Objective, ...]
    budget: int
    racing: dict[str, int] = field(default_factory=lambda: dict(RACING_DEFAULTS))
    confirm: int = 2000
    sampler: str = "tpe"
    trials: int = 500

    @property
    def game(self) -> str:
        return self.table.game

    @property
    def seed(self) -> int:
        return self.table.seed

    @property
    def name(self) -> str:
        return self.table.name

    def sweep(self, grid: list[dict[str, Any]], seed_offset: int, games: int, name: str = "") -> SweepSpec:
        """A sweep of these configs on seeds `seed + seed_offset ...`: how a tune evaluates."""
        data = {k: v for k, v in self.table.to_dict().items() if k in SWEEP_KEYS}
        data.update(
            {"grid": grid, "seed": self.seed + seed_offset, "games": games, "name": name or self.name}
        )
        data["chunk"] = min(self.table.chunk, max(1, games))
        return parse_spec(data)

    def to_dict(self) -> dict[str, Any]:
        table = {k: v for k, v in self.table.to_dict().items() if k in SWEEP_KEYS}
        search: dict[str, Any] = {}
        for p in self.params:
            if p.kind == "choice":
                search[p.name] = list(p.choices)
            else:
                search[p.name] = {"low": p.low, "high": p.high} | ({"step": p.step} if p.step != 1 else {})
        return {
            **table,
            "search": search,
            "objectives": [o.to_dict() for o in self.objectives],
            "budget": self.budget,
            "racing": dict(self.racing),
            "confirm": self.confirm,
            "sampler": self.sampler,
            "trials": self.trials,
        }


def load_tune_file(path: str | Path) -> TuneSpec:
    return parse_tune_spec(read_spec_file(path, "tune"))


@contextmanager
def _field(name: str) -> Iterator[None]:
    """Name the spec field a SpecError raised inside is about (`error.field`; the API's 400
    says it), unless an inner check already named a narrower one."""
    try:
        yield
    except SpecError as exc:
        if not getattr(exc, "field", None):
            exc.field = name  # type: ignore[attr-defined]
        raise


def _table(data: Mapping[str, Any]) -> SweepSpec:
    """The sweep part, checked by the sweep parser; on a refusal, find the key it is about by
    parsing the keys one at a time (the sweep parser's words stay the message)."""
    given = {k: data[k] for k in SWEEP_KEYS if k in data}
    try:
        return parse_spec({**given, "games": 1})
    except SpecError as exc:
        partial: dict[str, Any] = {}
        culprit = "game"
        for k in ("game", "name", "seed", "max_turns", "chunk", "config", "players", "lineups"):
            if k not in given:
                continue
            partial[k] = given[k]
            try:
                parse_spec({**partial, "games": 1})
            except SpecError:
                culprit = k
                break
        exc.field = culprit  # type: ignore[attr-defined]
        raise


def parse_tune_spec(data: Any) -> TuneSpec:
    """Validate a tune mapping completely; SpecError says exactly what is wrong, and its
    `field` names the part of the spec (`search.threshold`, `objectives[1]`, `budget`)."""
    if not isinstance(data, Mapping):
        raise SpecError("a tune spec must be a mapping with at least game, search, objectives and budget")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        with _field(unknown[0]):
            raise SpecError(f"unknown tune key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")
    table = _table(data)
    with _field("search"):
        params = _params(data.get("search"), table)
    with _field("objectives"):
        objectives = _objectives(data.get("objectives"), table)
    with _field("budget"):
        budget = whole_field(data, "budget", None, 1)
        if budget > MAX_TOTAL_GAMES:
            raise SpecError(f"'budget' may be at most {MAX_TOTAL_GAMES:,} games, got {budget:,}")
    racing = dict(RACING_DEFAULTS)
    raw = data.get("racing") or {}
    with _field("racing"):
        if not isinstance(raw, Mapping) or set(raw) - set(RACING_DEFAULTS):
            raise SpecError(f"racing takes {', '.join(RACING_DEFAULTS)}, got {raw!r}")
    for k in raw:
        with _field(f"racing.{k}"):
            racing[k] = whole_field(raw, k, None, 2 if k == "eta" else 1)
    if racing["games"] > budget:
        with _field("budget"):
            raise SpecError(f"budget ({budget} games) is below one first look ({racing['games']} games)")
    with _field("confirm"):
        confirm = whole_field(data, "confirm", 2000, 10)
        if confirm > MAX_TOTAL_GAMES:
            raise SpecError(f"'confirm' may be at most {MAX_TOTAL_GAMES:,} games, got {confirm:,}")
    default_sampler = "tpe" if len(objectives) == 1 else "nsga2"
    sampler = data.get("sampler", default_sampler)
    if sampler not in SAMPLERS:
        with _field("sampler"):
            raise SpecError(f"sampler must be one of {', '.join(SAMPLERS)}, got {sampler!r}")
    with _field("trials"):
        trials = whole_field(data, "trials", 500, 1)
    return TuneSpec(
        table=table,
        params=params,
        objectives=objectives,
        budget=budget,
        racing=racing,
        confirm=confirm,
        sampler=sampler,
        trials=trials,
    )


def _params(value: Any, table: SweepSpec) -> tuple[Param, ...]:
    if not isinstance(value, Mapping) or not value:
        raise SpecError(
            "search must map at least one config field to a range {low, high} or a list of choices"
        )
    hints, fields = _field_types(table.game_spec.config_class)
    out = []
    for name, how in value.items():
        with _field(f"search.{name}"):
            out.append(_param(name, how, table, hints, fields))
    return tuple(out)


def _param(name: Any, how: Any, table: SweepSpec, hints: dict[str, Any], fields: Any) -> Param:
    if name not in fields:
        raise SpecError(f"search field {name!r} is not a config field of {table.game}")
    if name in table.config or (name == "max_turns" and table.max_turns is not None):
        raise SpecError(f"search field {name!r} is also fixed in config; search it or fix it, not both")
    kind = hints[name]
    if isinstance(how, list):
        if not how:
            raise SpecError(f"search field {name!r} needs at least one choice")
        param = Param(name, "choice", choices=tuple(how))
        probes = list(how)
    elif isinstance(how, Mapping) and {"low", "high"} <= set(how) <= {"low", "high", "step"}:
        if kind not in (int, float):
            raise SpecError(f"search field {name!r} is not a number: give a list of choices")
        low, high = how["low"], how["high"]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
            raise SpecError(f"search field {name!r}: low and high must be numbers")
        if kind is int and not (float(low).is_integer() and float(high).is_integer()):
            raise SpecError(f"search field {name!r} takes whole numbers, got {low}..{high}")
        if low >= high:
            raise SpecError(f"search field {name!r}: low ({low}) must be below high ({high})")
        step = how.get("step", 1)
        if kind is not int and "step" in how:
            raise SpecError(f"search field {name!r}: step is for whole-number fields")
        if isinstance(step, bool) or not isinstance(step, int) or step < 1:
            raise SpecError(f"search field {name!r}: step must be a whole number >= 1")
        param = Param(name, "int" if kind is int else "float", low, high, step)
        probes = [int(low) if kind is int else low, int(high) if kind is int else high]
    else:
        raise SpecError(
            f"search field {name!r} needs {{low: .., high: ..}} or a list of choices, got {how!r}"
        )
    for v in probes:  # each end of the range must be a config the game takes
        try:
            table.game_spec.make_config({**table.config, name: v})
        except Exception as exc:  # BadConfig, or a value of the wrong kind
            raise SpecError(f"search field {name}={v!r}: {exc}") from None
    return param


def _objectives(value: Any, table: SweepSpec) -> tuple[Objective, ...]:
    if not isinstance(value, list) or not value:
        raise SpecError(
            "objectives must be a non-empty list, e.g. [{metric: seat_rate, seat: 0, target: [0.45, 0.55]}]"
        )
    out = []
    for i, item in enumerate(value):
        with _field(f"objectives[{i}]"):
            out.append(_objective(item, table))
    return tuple(out)


def _objective(item: Any, table: SweepSpec) -> Objective:
    if not isinstance(item, Mapping) or item.get("metric") not in METRICS:
        raise SpecError(
            f"bad objective {item!r}; metrics: " + "; ".join(f"{k} ({v})" for k, v in METRICS.items())
        )
    metric = item["metric"]
    allowed = {"metric", "target"} | {
        "seat_rate": {"seat"}, "group_spread": {"group"}, "play_rate": {"card"}
    }.get(metric, set())  # fmt: skip
    if set(item) - allowed:
        raise SpecError(f"objective {metric} takes {', '.join(sorted(allowed))}, got {sorted(item)}")
    target = item.get("target")
    if metric in AT_MOST:
        if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target <= 1:
            raise SpecError(f"objective {metric} wants a target between 0 and 1 (at most), got {target!r}")
        bounds = (0.0, float(target))
    else:
        if (
            not isinstance(target, list)
            or len(target) != 2
            or not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in target)
            or target[0] >= target[1]
        ):
            raise SpecError(f"objective {metric} wants a target range [low, high], got {target!r}")
        if metric != "mean_length" and not 0 <= target[0] < target[1] <= 1:
            raise SpecError(f"objective {metric}: a rate's range lies within [0, 1], got {target}")
        bounds = (float(target[0]), float(target[1]))
    seat = item.get("seat", 0)
    if metric == "seat_rate" and (
        isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < min(table.players)
    ):
        raise SpecError(f"objective seat_rate: seat must be 0..{min(table.players) - 1}, got {seat!r}")
    group = item.get("group", "")
    if metric == "group_spread" and (not isinstance(group, str) or not group):
        raise SpecError("objective group_spread names its group, e.g. group: cult")
    card = item.get("card", "")
    if metric == "play_rate" and (not isinstance(card, str) or not card):
        raise SpecError("objective play_rate names its card, e.g. card: Counter-Spell")
    return Objective(metric, bounds, seat, group, card)
