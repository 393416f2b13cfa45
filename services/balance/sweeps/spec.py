"""A sweep spec: what to simulate, read from YAML/JSON or an API body, refused early if wrong.

The spec is the one input of a sweep, and the same mapping arrives from a file
(`cultists sweep spec.yaml`) and from the gateway's POST body, so both are checked here,
completely, before anything is queued. Its shape (keys, kinds, minimums) is declared once,
as the pydantic model `SweepSpecInput`, which also gives the gateway's OpenAPI schema; then
`parse_spec` checks what a shape cannot say: every cell's config is built (unknown fields,
bad values and the game's own range checks all surface now), each cell's first game is
dealt (checks that depend on the table size, like a `cults` list per seat), and every bot
name is parsed by the engines' own `make_bot`. A spec that parses can run.

    game: crazy_cultists
    seed: 1             # master seed: game i of every cell uses seed + i
    games: 400          # games per cell
    players: [3, 4]
    max_turns: 300      # turn cap (rulings G-5); optional
    config: {dark_powers: true}              # overrides applied to every cell
    grid: {variant: [base, fiendish]}        # cartesian product; or a list of override maps
    lineups: [random, [heuristic, random, random, random], {hero: heuristic, field: random}]
    chunk: 250          # games per chunk task; optional
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from services.engines.core.bots import make_bot, parse_bot_spec
from services.engines.core.config import config_to_dict
from services.engines.core.errors import BadConfig
from services.engines.core.game import GameSpec
from services.engines.registry import GAME_MODULES, load_game
from services.models import MAX_BOT_SPEC, describe, first_field, one_of

DEFAULT_CHUNK = 250
# A guard against a typo (games: 1e9) filling Redis; raise it deliberately if needed.
MAX_TOTAL_GAMES = 50_000_000
# Cells one sweep may compare: each is a row of its report and a deal checked up front.
MAX_CELLS = 2000
# Game i of a cell plays seed + i: kept well inside a 64-bit record's seed column.
SEED_MAX = 2**62
# Every count of a spec is bounded, so none reaches past what a stored spec (64-bit JSON) holds.
MAX_TURNS = 1_000_000


class SpecError(BadConfig):
    """A spec that cannot run; the message says which part and why, and `field` (when one
    part is at fault) its dotted path, which the API's 400 repeats for programs."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


# -- the spec's shape: one declaration for files, the CLI, the API and its OpenAPI document --
class SpecModel(BaseModel):
    """Base of the spec models. Strict like the API's bodies (`"1"`, `1.0`, `true` are not
    whole numbers), but a key the spec does not know is refused, not ignored: in a spec
    file it is a typo whose setting would silently not apply."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)
    REQUIRED: ClassVar[str] = ""


M = TypeVar("M", bound=SpecModel)


def _known_game(name: str) -> str:
    """Looked up when a spec is read, not when this module is: tests register games."""
    if name not in GAME_MODULES:
        raise PydanticCustomError(
            "unknown_game",
            "unknown game {game}; games: {games}",
            {"game": repr(name), "games": ", ".join(GAME_MODULES)},
        )
    return name


GameName = Annotated[
    str,
    AfterValidator(_known_game),
    Field(json_schema_extra=lambda schema: schema.update(enum=sorted(GAME_MODULES))),
]
BotName = Annotated[str, Field(min_length=1, max_length=MAX_BOT_SPEC, description="a bot, with parameters")]


class HeroField(SpecModel):
    """One bot against a field of another: `hero` in one seat, `field` in the rest."""

    hero: BotName
    field: BotName


if TYPE_CHECKING:  # what a type checker reads; at run time one_of builds each validating union
    Lineup: TypeAlias = str | list[str] | HeroField
    Players: TypeAlias = int | list[int]
    Grid: TypeAlias = dict[str, list[Any]] | list[dict[str, Any]]
else:
    Lineup = one_of(
        "a bot name, a list of one bot per seat, or {hero, field}",
        bot=(BotName, (str,)),
        seats=(Annotated[list[BotName], Field(min_length=1)], (list,)),
        hero_field=(HeroField, (dict,)),
    )
    Players = one_of(
        "a player count or a list of them",
        count=(Annotated[int, Field(ge=1)], (int,)),
        counts=(Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1)], (list,)),
    )
    Grid = one_of(
        "a mapping of field: [values] (every combination) or a list of override maps",
        product=(dict[str, Annotated[list[Any], Field(min_length=1)]], (dict,)),
        maps=(list[dict[str, Any]], (list,)),
    )


class TableSpecInput(SpecModel):
    """What a sweep and a tune both say about the table they play at."""

    name: str | None = Field(None, max_length=200, description="a label for reports; default: the game")
    game: GameName
    seed: int = Field(0, ge=0, le=SEED_MAX, description="master seed: game i of every cell uses seed + i")
    players: Players | None = Field(None, description="player counts; default: the game's usual one")
    max_turns: int | None = Field(
        None, ge=1, le=MAX_TURNS, description="turn cap (rulings G-5); default: the game's"
    )
    config: dict[str, Any] | None = Field(None, description="config overrides applied to every cell")
    lineups: Annotated[list[Lineup], Field(min_length=1)] | None = Field(
        None, description="bot line-ups; default: random in every seat"
    )
    chunk: int = Field(DEFAULT_CHUNK, ge=1, le=MAX_TOTAL_GAMES, description="games per chunk task")
    skip_unchanged: bool = Field(
        True,
        description="skip (play no games in) a cell whose overrides leave the game of its player count "
        "unchanged from its base cell: a field for another table size (`food_needed_4p` at 2 players)",
    )
    shuffle: Literal["keyed", "fisher-yates"] = Field(
        "keyed",
        description="how every game is dealt: keyed (coupled across cells, so a deck change moves only "
        "its own cards; docs/fairness.md) or fisher-yates (sweeps stored before keyed deals)",
    )


class SweepSpecInput(TableSpecInput):
    """A sweep spec as written (a YAML/JSON file, or the body of `POST /api/sweeps`)."""

    REQUIRED: ClassVar[str] = "'game' and 'games'"

    games: int = Field(ge=1, le=MAX_TOTAL_GAMES, description="games per cell")
    grid: Grid | None = Field(None, description="variants to compare; default: the config alone")


@dataclass(frozen=True)
class Cell:
    """One combination of variant, player count and bot line-up; the unit of comparison."""

    index: int
    variant: str  # words for the grid overrides ("base" when there are none)
    overrides: dict[str, Any]  # everything this cell changes from the game's defaults
    players: int
    lineup: tuple[str, ...]  # one bot per seat before rotation
    skipped: str | None = None  # why no game is played in it (the same game as its base cell)

    @property
    def label(self) -> str:
        return f"{self.variant} | {self.players}p | {lineup_label(self.lineup)}"

    @property
    def rotates(self) -> bool:
        """Seat rotation matters only when the line-up mixes bots."""
        return len(set(self.lineup)) > 1

    def seat_bots(self, game_index: int) -> list[str]:
        """The bots by seat for game `game_index`: the line-up turned by game_index % n.

        Over any n consecutive games every bot of the line-up sits in every seat once, so
        a strong bot cannot hide a seat advantage (or the other way round).
        """
        n = self.players
        r = game_index % n
        return [self.lineup[(s + r) % n] for s in range(n)]


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep; `to_dict()` gives the normalised mapping that parses back to it."""

    game: str
    seed: int
    games: int
    players: tuple[int, ...]
    lineups: tuple[Any, ...]  # as written: str, list of str, or {hero, field}
    config: dict[str, Any]
    grid: tuple[dict[str, Any], ...]
    max_turns: int | None
    chunk: int
    name: str
    shuffle: str = "fisher-yates"  # game.SHUFFLES: a spec stored before keyed deals has none
    skip_unchanged: bool = False  # a spec stored before skipped cells planned every cell

    @property
    def game_spec(self) -> GameSpec:
        return load_game(self.game)

    def cells(self) -> list[Cell]:
        """Every cell, in a fixed order: variant, then player count, then line-up."""
        out: list[Cell] = []
        for variant in self.grid:
            overrides = dict(self.config)
            if self.max_turns is not None:
                overrides["max_turns"] = self.max_turns
            overrides.update(variant)
            for players in self.players:
                for lineup in self.lineups:
                    seats = _lineup_for(lineup, players)
                    if seats is None:
                        continue
                    out.append(Cell(len(out), variant_label(variant), overrides, players, seats))
        if self.skip_unchanged:
            out = _mark_unchanged(out)
        return out

    def played_cells(self) -> list[Cell]:
        """The cells that play games: every cell but the skipped ones."""
        return [c for c in self.cells() if c.skipped is None]

    @property
    def total_games(self) -> int:
        return self.games * len(self.played_cells())

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "game": self.game,
            "seed": self.seed,
            "games": self.games,
            "players": list(self.players),
            "max_turns": self.max_turns,
            "config": dict(self.config),
            "grid": [dict(v) for v in self.grid],
            "lineups": [_plain(x) for x in self.lineups],
            "chunk": self.chunk,
            "shuffle": self.shuffle,
            "skip_unchanged": self.skip_unchanged,
        }


_PER_TABLE_SIZE = re.compile(r"_(\d+)p$")
_UNSET = object()


def unused_at(field_name: str, players: int) -> bool:
    """Does a config field say nothing about a game of `players` seats? A field named for
    another table size (`food_needed_4p`, by the configs' `_<n>p` convention) does not."""
    found = _PER_TABLE_SIZE.search(field_name)
    return found is not None and int(found.group(1)) != players


def _mark_unchanged(cells: list[Cell]) -> list[Cell]:
    """Each cell whose overrides differ from its base cell's (same players and line-up,
    first grid entry) only in fields unused at its player count, or not at all, marked
    skipped with the reason: its games would be the base cell's games again."""
    if not cells:
        return cells
    first = cells[0].variant
    base = {(c.players, c.lineup): c for c in cells if c.variant == first}
    out = []
    for cell in cells:
        b = base.get((cell.players, cell.lineup))
        if b is None or cell.variant == first:
            out.append(cell)
            continue
        keys = cell.overrides.keys() | b.overrides.keys()
        differ = sorted(k for k in keys if cell.overrides.get(k, _UNSET) != b.overrides.get(k, _UNSET))
        if all(unused_at(k, cell.players) for k in differ):
            why = (
                f"{', '.join(differ)} {'does' if len(differ) == 1 else 'do'} not change a {cell.players}-player game"
                if differ
                else f"the same config as {b.variant}"
            )
            cell = dataclasses.replace(cell, skipped=f"{why}: its games would be cell {b.index}'s again")
        out.append(cell)
    return out


def lineup_label(lineup: tuple[str, ...] | list[str]) -> str:
    if len(set(lineup)) == 1:
        return f"{lineup[0]} x{len(lineup)}"
    return ",".join(lineup)


def variant_label(overrides: Mapping[str, Any]) -> str:
    if not overrides:
        return "base"
    return " ".join(f"{k}={_word(v)}" for k, v in overrides.items())


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_word(v) for v in value)
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _lineup_for(lineup: Any, players: int) -> tuple[str, ...] | None:
    """The seats of `lineup` at a table of `players`, or None if it does not fit that table."""
    if isinstance(lineup, str):
        return (lineup,) * players
    if isinstance(lineup, dict):
        return (lineup["hero"],) + (lineup["field"],) * (players - 1)
    if len(lineup) == 1:
        return (lineup[0],) * players
    if len(lineup) == players:
        return tuple(lineup)
    return None


def read_spec_file(path: str | Path, kind: str = "sweep") -> Any:
    """A YAML or JSON spec file's data (YAML is a superset of JSON); SpecError if unreadable."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SpecError(f"cannot read {kind} spec {path}: {exc.strerror}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        problem = getattr(exc, "problem", None) or str(exc).strip().splitlines()[0]
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise SpecError(f"{kind} spec {path} is not YAML or JSON: {problem}{where}") from None


def load_spec_file(path: str | Path) -> SweepSpec:
    """Read a YAML or JSON sweep spec file and validate it."""
    return parse_spec(read_spec_file(path))


def read_spec(model: type[M], data: Any, kind: str) -> M:
    """`data` as the spec `model` (already one: as is), or SpecError naming the field."""
    if isinstance(data, model):
        return data
    if not isinstance(data, Mapping):
        raise SpecError(f"a {kind} spec must be a mapping (YAML/JSON object) with at least {model.REQUIRED}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise SpecError(describe(exc), field=first_field(exc) or None) from None


def parse_spec(
    data: Mapping[str, Any] | SweepSpecInput, max_chunks: int | None = None, deals: int | None = None
) -> SweepSpec:
    """Validate a spec completely: its shape by `SweepSpecInput`, then what the shape cannot
    say (player counts the game takes, bots that exist, cells that deal); SpecError says
    exactly what is wrong, and its `field` names the part of the spec when one is at fault.

    The sweep's size is checked first, from the spec's numbers alone (`planned_size`),
    before any cell or chunk exists: more than MAX_CELLS cells, MAX_TOTAL_GAMES games or
    `max_chunks` chunk tasks is refused at once, however large it asks to be.

    `deals`: deal the first game of at most this many distinct cell configurations (all
    when None). A request that submits a sweep deals a few, so the usual mistake is a 400
    at once while its work stays fixed; the worker that plans the sweep (control.plan)
    parses it again and deals them all."""
    given = read_spec(SweepSpecInput, data, "sweep")
    gspec = installed_game(given.game)
    players = _players(given.players, gspec)
    cells_at_most, chunks_at_most = planned_size(given, len(players))
    if cells_at_most > MAX_CELLS:
        raise SpecError(
            f"the grid, player counts and line-ups make up to {cells_at_most:,} cells; a sweep holds at most "
            f"{MAX_CELLS:,} (split it into several sweeps)",
            field="grid",
        )
    if max_chunks is not None and chunks_at_most > max_chunks:
        raise SpecError(
            f"that is up to {chunks_at_most:,} chunk tasks; a sweep submitted here queues at most {max_chunks} "
            "(raise 'chunk', or run it with `cultists sweep`)",
            field="chunk",
        )
    grid = _grid(given.grid)
    lineups = _lineups(given.lineups, gspec, players)
    spec = SweepSpec(
        game=given.game,
        seed=given.seed,
        games=given.games,
        players=players,
        lineups=lineups,
        config=dict(given.config or {}),
        grid=grid,
        max_turns=given.max_turns,
        chunk=given.chunk,
        name=given.name or given.game,
        shuffle=given.shuffle,
        skip_unchanged=given.skip_unchanged,
    )
    cells = spec.cells()
    if spec.games * len(cells) > MAX_TOTAL_GAMES:
        raise SpecError(
            f"{len(cells)} cells x {spec.games} games = {spec.games * len(cells):,} games, "
            f"more than the {MAX_TOTAL_GAMES:,} a sweep may hold",
            field="games",
        )
    built: dict[tuple[str, int], str | None] = {}
    for cell in cells:
        key = (json.dumps(cell.overrides, sort_keys=True, default=str), cell.players)
        if key not in built:
            if deals is not None and len(built) >= deals:
                break
            built[key] = _deal_error(gspec, cell, given.seed, given.shuffle)
        if built[key] is not None:
            raise SpecError(f"cell '{cell.label}': {built[key]}")
    return spec


def parse_stored_spec(data: Mapping[str, Any]) -> SweepSpec:
    """A spec read back from a store or a report: one written before keyed deals has no
    `shuffle` and was dealt by Fisher-Yates, so it is read so, and its games replay as
    they were played (docs/fairness.md, "Coupled deals"); nor `skip_unchanged`, and it
    planned every cell, so it still does."""
    if not isinstance(data, Mapping):
        return parse_spec(data)
    return parse_spec({"shuffle": "fisher-yates", "skip_unchanged": False, **data})


def planned_size(given: SweepSpecInput, player_counts: int) -> tuple[int, int]:
    """(cells, chunk tasks) a spec plans at most, from its lengths alone: the grid's
    product, times its player counts, times its line-ups (some line-ups may fit fewer
    counts, so the real plan is no larger)."""
    grid = given.grid
    if not grid:
        variants = 1
    elif isinstance(grid, dict):
        variants = math.prod(len(options) for options in grid.values())
    else:
        variants = len(grid)
    cells = variants * player_counts * len(given.lineups or ["random"])
    return cells, cells * -(-given.games // given.chunk)


def installed_game(game: str) -> GameSpec:
    try:
        return load_game(game)
    except KeyError:
        raise SpecError(f"game {game!r} is not installed in this checkout", field="game") from None


def _deal_error(gspec: GameSpec, cell: Cell, seed: int, shuffle: str) -> str | None:
    """Build the cell's config and deal its first game: None if it can run, else why not.

    Some config checks need the table size (Trash Cult's `cults` must name one cult per
    seat; Crazy Cultists refuses 2 players without `two_players`, CC-2), so a config that
    builds can still fail to deal; dealing once here refuses such a spec before anything is
    queued instead of failing every chunk at run time.
    """
    try:
        config = gspec.make_config(cell.overrides)
        gspec.new_state(config, cell.players, seed, None, shuffle)
    except BadConfig as exc:
        return str(exc)
    return None


def cell_config(spec: SweepSpec, cell: Cell) -> dict[str, Any]:
    """The full config of a cell as a plain dict (what a replay record carries)."""
    return config_to_dict(spec.game_spec.make_config(cell.overrides))


def _players(value: int | list[int] | None, gspec: GameSpec) -> tuple[int, ...]:
    if value is None:
        return (gspec.default_players,)
    out: list[int] = []
    for v in value if isinstance(value, list) else [value]:
        if not gspec.min_players <= v <= gspec.max_players:
            raise SpecError(
                f"{gspec.title} takes {gspec.min_players}-{gspec.max_players} players, not {v}",
                field="players",
            )
        if v not in out:
            out.append(v)
    return tuple(out)


def _grid(value: dict[str, list[Any]] | list[dict[str, Any]] | None) -> tuple[dict[str, Any], ...]:
    """`{field: [values]}` is a cartesian product; a list of override maps is taken as is."""
    if not value:
        return ({},)
    if isinstance(value, dict):
        axes = [[(key, o) for o in options] for key, options in value.items()]
        return tuple(dict(combo) for combo in itertools.product(*axes))
    out = tuple(dict(v) for v in value)
    if len({json.dumps(v, sort_keys=True, default=str) for v in out}) != len(out):
        raise SpecError("the grid lists the same overrides twice", field="grid")
    return out


def _lineups(value: list[Any] | None, gspec: GameSpec, players: tuple[int, ...]) -> tuple[Any, ...]:
    if value is None:
        return ("random",)
    out: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, HeroField):
            names = [item.hero, item.field]
            norm: Any = {"hero": item.hero, "field": item.field}
        elif isinstance(item, list):
            names = list(item)
            norm = list(item)
            if len(item) > 1 and len(item) not in players:
                raise SpecError(
                    f"line-up {item} names {len(item)} bots, but the sweep's player counts are {list(players)}",
                    field=f"lineups.{i}",
                )
        else:
            names = [item]
            norm = item
        for name in names:
            _check_bot(gspec, name, f"lineups.{i}")
        out.append(norm)
    for n in players:
        if not any(_lineup_for(x, n) for x in out):
            raise SpecError(f"no line-up fits {n} players", field="lineups")
    return tuple(out)


def _check_bot(gspec: GameSpec, text: str, field: str) -> None:
    """A bot must exist for the game and be reproducible (same seed, same moves)."""
    try:
        _name, params = parse_bot_spec(text)
        make_bot(gspec, text, 0)
    except BadConfig as exc:
        raise SpecError(f"bad bot {text!r}: {exc}", field=field) from None
    if "ms" in params:
        raise SpecError(
            f"bot {text!r} thinks for a wall-clock time, so its games would not replay; "
            "sweeps need a fixed budget (e.g. iterations=200)",
            field=field,
        )


def lineup_bots(lineups: Any) -> set[str]:
    """Every bot a spec's line-ups name (a name, one per seat, or {hero, field})."""
    out: set[str] = set()
    for item in lineups:
        if isinstance(item, str):
            out.add(item)
        elif isinstance(item, list | tuple):
            out.update(item)
        elif isinstance(item, dict):
            out.update(v for v in item.values() if isinstance(v, str))
    return out
