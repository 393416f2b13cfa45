"""A tune spec: which rules to search, for what, with how many games; refused early if wrong.

A tune is a search over rule configs for one that meets a designer's targets. The table it
plays at (game, player counts, line-ups, fixed config, turn cap, chunk size) is written as in
a sweep spec and checked by the sweep parser (`services/balance/sweeps/spec.py`), so anything a sweep
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
    guards: {draw_rate: 0.05, cap_rate: 0.01, length_change: 0.25}   # the defaults (guards.py)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import Field

from services.balance.sweeps.spec import (
    MAX_TOTAL_GAMES,
    SpecError,
    SpecModel,
    SweepSpec,
    TableSpecInput,
    parse_spec,
    read_spec,
    read_spec_file,
)
from services.engines.core.config import field_types
from services.models import one_of

from .guards import DEFAULT_GUARDS, Guard, guards_to_dict, parse_guards

SWEEP_KEYS = tuple(TableSpecInput.model_fields)
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
    guards: tuple[Guard, ...] = field(default_factory=lambda: parse_guards(None))

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
            "guards": guards_to_dict(self.guards),
        }


# -- the spec's shape: one declaration for files, the CLI, the API and its OpenAPI document --
class SearchRange(SpecModel):
    """A searched number between `low` and `high` (whole numbers in steps of `step`)."""

    low: float
    high: float
    step: int | None = Field(None, ge=1, description="for whole-number fields; default 1")


if TYPE_CHECKING:  # what a type checker reads; at run time one_of builds each validating union
    SearchHow: TypeAlias = SearchRange | list[Any]
    Target: TypeAlias = float | list[float]
else:
    SearchHow = one_of(
        "{low, high[, step]} or a non-empty list of choices",
        range=(SearchRange, (dict,)),
        choices=(Annotated[list[Any], Field(min_length=1)], (list,)),
    )
    Target = one_of(
        "a number (at most, for a spread) or a range [low, high]",
        at_most=(Annotated[float, Field(gt=0, le=1)], (int, float)),
        range=(Annotated[list[float], Field(min_length=2, max_length=2)], (list,)),
    )


class ObjectiveInput(SpecModel):
    """A measured figure and its target; `seat`, `group` and `card` say what it measures."""

    metric: Literal[tuple(METRICS)]  # type: ignore[valid-type]
    target: Target
    seat: int | None = Field(None, ge=0, description="seat_rate: whose win rate")
    group: str | None = Field(None, min_length=1, description="group_spread: e.g. cult, team")
    card: str | None = Field(None, min_length=1, description="play_rate: e.g. Counter-Spell")


class Racing(SpecModel):
    """Successive halving (search.py): first look, cut factor, rungs, trials per batch."""

    games: int = Field(RACING_DEFAULTS["games"], ge=1, description="games of a trial's first look")
    eta: int = Field(RACING_DEFAULTS["eta"], ge=2, description="keep 1 in eta at each rung")
    rungs: int = Field(RACING_DEFAULTS["rungs"], ge=1)
    batch: int = Field(RACING_DEFAULTS["batch"], ge=1, description="trials raced together")


class TuneSpecInput(TableSpecInput):
    """A tune spec as written (a YAML/JSON file, or the body of `POST /api/tunes`); the table
    part is a sweep spec's."""

    REQUIRED: ClassVar[str] = "game, search, objectives and budget"

    search: Annotated[dict[str, SearchHow], Field(min_length=1)] = Field(
        description="config field -> {low, high[, step]} or a list of choices"
    )
    objectives: Annotated[list[ObjectiveInput], Field(min_length=1)]
    budget: int = Field(ge=1, le=MAX_TOTAL_GAMES, description="games the search may spend")
    racing: Racing | None = None
    confirm: int = Field(2000, ge=10, le=MAX_TOTAL_GAMES, description="fresh games per table for the proof")
    sampler: Literal[SAMPLERS] | None = Field(  # type: ignore[valid-type]
        None, description="default: tpe for one objective, nsga2 for several"
    )
    trials: int = Field(500, ge=1, description="at most this many configs tried")
    guards: dict[str, float | None] | None = Field(
        None,
        description="guard rails every config must keep (guards.py): "
        + ", ".join(f"{k} (default {v})" for k, v in DEFAULT_GUARDS.items())
        + "; a number overrides a limit, null turns a guard off",
    )


def load_tune_file(path: str | Path) -> TuneSpec:
    return parse_tune_spec(read_spec_file(path, "tune"))


@contextmanager
def _field(name: str) -> Iterator[None]:
    """Name the spec field a SpecError raised inside is about (`error.field`; the API's 400
    says it), unless an inner check already named a narrower one."""
    try:
        yield
    except SpecError as exc:
        if not exc.field:
            exc.field = name
        raise


def _table(given: TuneSpecInput) -> SweepSpec:
    """The sweep part, checked by the sweep parser; on a refusal it did not pin on a key (a
    config that does not deal), find the key by parsing the keys one at a time (the sweep
    parser's words stay the message)."""
    table = given.model_dump(include=set(SWEEP_KEYS), exclude_unset=True)
    try:
        return parse_spec({**table, "games": 1})
    except SpecError as exc:
        if exc.field:
            raise
        partial: dict[str, Any] = {}
        culprit = "game"
        for k in ("game", "name", "seed", "max_turns", "chunk", "config", "players", "lineups"):
            if k not in table:
                continue
            partial[k] = table[k]
            try:
                parse_spec({**partial, "games": 1})
            except SpecError:
                culprit = k
                break
        exc.field = culprit
        raise


def parse_tune_spec(data: Mapping[str, Any] | TuneSpecInput) -> TuneSpec:
    """Validate a tune completely: its shape by `TuneSpecInput`, then what the shape cannot
    say (fields the game has, targets in range, a budget that covers a first look); SpecError
    says exactly what is wrong, and its `field` names the part of the spec
    (`search.threshold`, `objectives.1`, `budget`)."""
    given = read_spec(TuneSpecInput, data, "tune")
    table = _table(given)
    with _field("search"):
        params = _params(given.search, table)
    with _field("objectives"):
        objectives = _objectives(given.objectives, table)
    with _field("guards"):
        guards = parse_guards(given.guards)
    if any(o.metric == "mean_length" for o in objectives) and "length_change" not in (given.guards or {}):
        # A tune that targets the length itself is not held to the printed rules' length by
        # default (it may name the guard to keep it).
        guards = tuple(g for g in guards if g.metric != "length_change")
    racing = (given.racing or Racing()).model_dump()
    if racing["games"] > given.budget:
        with _field("budget"):
            raise SpecError(
                f"budget ({given.budget} games) is below one first look ({racing['games']} games)"
            )
    return TuneSpec(
        table=table,
        params=params,
        objectives=objectives,
        budget=given.budget,
        racing=racing,
        confirm=given.confirm,
        sampler=given.sampler or ("tpe" if len(objectives) == 1 else "nsga2"),
        trials=given.trials,
        guards=guards,
    )


def _params(value: dict[str, Any], table: SweepSpec) -> tuple[Param, ...]:
    hints, fields = field_types(table.game_spec.config_class)
    out = []
    for name, how in value.items():
        with _field(f"search.{name}"):
            out.append(_param(name, how, table, hints, fields))
    return tuple(out)


def _param(
    name: str, how: SearchRange | list[Any], table: SweepSpec, hints: dict[str, Any], fields: Any
) -> Param:
    if name not in fields:
        raise SpecError(f"search field {name!r} is not a config field of {table.game}")
    if name in table.config or (name == "max_turns" and table.max_turns is not None):
        raise SpecError(f"search field {name!r} is also fixed in config; search it or fix it, not both")
    kind = hints[name]
    if isinstance(how, list):
        param = Param(name, "choice", choices=tuple(how))
        probes = list(how)
    else:
        if kind not in (int, float):
            raise SpecError(f"search field {name!r} is not a number: give a list of choices")
        low, high = how.low, how.high
        if kind is int and not (low.is_integer() and high.is_integer()):
            raise SpecError(f"search field {name!r} takes whole numbers, got {low:g}..{high:g}")
        if low >= high:
            raise SpecError(f"search field {name!r}: low ({low:g}) must be below high ({high:g})")
        if kind is not int and how.step is not None:
            raise SpecError(f"search field {name!r}: step is for whole-number fields")
        if kind is int:
            param = Param(name, "int", int(low), int(high), how.step or 1)
        else:
            param = Param(name, "float", low, high)
        probes = [param.low, param.high]
    for v in probes:  # each end of the range must be a config the game takes
        try:
            table.game_spec.make_config({**table.config, name: v})
        except Exception as exc:  # BadConfig, or a value of the wrong kind
            raise SpecError(f"search field {name}={v!r}: {exc}") from None
    return param


def _objectives(value: list[ObjectiveInput], table: SweepSpec) -> tuple[Objective, ...]:
    out = []
    for i, item in enumerate(value):
        with _field(f"objectives.{i}"):
            out.append(_objective(item, table))
    return tuple(out)


# What each metric measures beyond itself: the one key it takes (the others take none).
_SUBJECT = {"seat_rate": "seat", "group_spread": "group", "play_rate": "card"}


def _objective(item: ObjectiveInput, table: SweepSpec) -> Objective:
    metric = item.metric
    subject = _SUBJECT.get(metric)
    extra = item.model_fields_set - {"metric", "target", subject}
    if extra:
        allowed = sorted({"metric", "target"} | ({subject} if subject else set()))
        raise SpecError(f"objective {metric} takes {', '.join(allowed)}, not {', '.join(sorted(extra))}")
    target = item.target
    if metric in AT_MOST:
        if isinstance(target, list):
            raise SpecError(f"objective {metric} wants a target between 0 and 1 (at most), got {target!r}")
        bounds = (0.0, float(target))
    else:
        if not isinstance(target, list) or target[0] >= target[1]:
            raise SpecError(f"objective {metric} wants a target range [low, high], got {target!r}")
        if metric != "mean_length" and not 0 <= target[0] < target[1] <= 1:
            raise SpecError(f"objective {metric}: a rate's range lies within [0, 1], got {target}")
        bounds = (float(target[0]), float(target[1]))
    seat = item.seat or 0
    if metric == "seat_rate" and not seat < min(table.players):
        raise SpecError(f"objective seat_rate: seat must be 0..{min(table.players) - 1}, got {seat!r}")
    if metric == "group_spread" and not item.group:
        raise SpecError("objective group_spread names its group, e.g. group: cult")
    if metric == "play_rate" and not item.card:
        raise SpecError("objective play_rate names its card, e.g. card: Counter-Spell")
    return Objective(metric, bounds, seat, item.group or "", item.card or "")
