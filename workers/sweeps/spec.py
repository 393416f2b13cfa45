"""A sweep spec: what to simulate, read from YAML/JSON or an API body, refused early if wrong.

The spec is the one input of a sweep, and the same mapping arrives from a file
(`cultists sweep spec.yaml`) and from the gateway's POST body, so both are checked here,
completely, before anything is queued: every cell's config is built (unknown fields, bad
values and the game's own range checks all surface now), each cell's first game is dealt
(checks that depend on the table size, like a `cults` list per seat), and every bot name
is parsed by the engines' own `make_bot`. A spec that parses can run.

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

import itertools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.engines.core.bots import make_bot, parse_bot_spec
from services.engines.core.config import config_to_dict
from services.engines.core.errors import BadConfig
from services.engines.core.game import GameSpec
from services.engines.registry import GAME_MODULES, load_game

DEFAULT_CHUNK = 250
# A guard against a typo (games: 1e9) filling Redis; raise it deliberately if needed.
MAX_TOTAL_GAMES = 50_000_000
KEYS = {"name", "game", "seed", "games", "players", "max_turns", "config", "grid", "lineups", "chunk"}


class SpecError(BadConfig):
    """A sweep spec that cannot run; the message says which part and why."""


@dataclass(frozen=True)
class Cell:
    """One combination of variant, player count and bot line-up; the unit of comparison."""

    index: int
    variant: str  # words for the grid overrides ("base" when there are none)
    overrides: dict[str, Any]  # everything this cell changes from the game's defaults
    players: int
    lineup: tuple[str, ...]  # one bot per seat before rotation

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
        return out

    @property
    def total_games(self) -> int:
        return self.games * len(self.cells())

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
        }


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
        raise SpecError(f"{kind} spec {path} is not YAML or JSON: {exc}") from None


def load_spec_file(path: str | Path) -> SweepSpec:
    """Read a YAML or JSON sweep spec file and validate it."""
    return parse_spec(read_spec_file(path))


def parse_spec(data: Any) -> SweepSpec:
    """Validate a spec mapping completely; SpecError says exactly what is wrong."""
    if not isinstance(data, Mapping):
        raise SpecError("a sweep spec must be a mapping (YAML/JSON object) with at least 'game' and 'games'")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise SpecError(f"unknown spec key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")
    game = data.get("game")
    if not isinstance(game, str) or game not in GAME_MODULES:
        raise SpecError(f"unknown game {game!r}; games: {', '.join(sorted(GAME_MODULES))}")
    try:
        gspec = load_game(game)
    except KeyError:
        raise SpecError(f"game {game!r} is not installed in this checkout") from None

    games = whole_field(data, "games", None, minimum=1)
    seed = whole_field(data, "seed", 0, minimum=0)
    chunk = whole_field(data, "chunk", DEFAULT_CHUNK, minimum=1)
    max_turns = data.get("max_turns")
    if max_turns is not None:
        max_turns = whole_field(data, "max_turns", None, minimum=1)
    name = data.get("name") or game
    if not isinstance(name, str):
        raise SpecError(f"name must be text, got {name!r}")

    players = _players(data.get("players"), gspec)
    config = data.get("config") or {}
    if not isinstance(config, Mapping):
        raise SpecError(f"config must be a mapping of field: value, got {config!r}")
    grid = _grid(data.get("grid"))
    lineups = _lineups(data.get("lineups"), gspec, players)

    spec = SweepSpec(
        game=game,
        seed=seed,
        games=games,
        players=players,
        lineups=lineups,
        config=dict(config),
        grid=grid,
        max_turns=max_turns,
        chunk=chunk,
        name=name,
    )
    cells = spec.cells()
    if spec.games * len(cells) > MAX_TOTAL_GAMES:
        raise SpecError(
            f"{len(cells)} cells x {spec.games} games = {spec.games * len(cells):,} games, "
            f"more than the {MAX_TOTAL_GAMES:,} a sweep may hold"
        )
    built: dict[tuple[str, int], str | None] = {}
    for cell in cells:
        key = (json.dumps(cell.overrides, sort_keys=True, default=str), cell.players)
        if key not in built:
            built[key] = _deal_error(gspec, cell, seed)
        if built[key] is not None:
            raise SpecError(f"cell '{cell.label}': {built[key]}")
    return spec


def _deal_error(gspec: GameSpec, cell: Cell, seed: int) -> str | None:
    """Build the cell's config and deal its first game: None if it can run, else why not.

    Some config checks need the table size (Trash Cult's `cults` must name one cult per
    seat; Crazy Cultists refuses 2 players without `two_players`, CC-2), so a config that
    builds can still fail to deal; dealing once here refuses such a spec before anything is
    queued instead of failing every chunk at run time.
    """
    try:
        config = gspec.make_config(cell.overrides)
        gspec.new_state(config, cell.players, seed)
    except BadConfig as exc:
        return str(exc)
    return None


def cell_config(spec: SweepSpec, cell: Cell) -> dict[str, Any]:
    """The full config of a cell as a plain dict (what a replay record carries)."""
    return config_to_dict(spec.game_spec.make_config(cell.overrides))


def whole_field(data: Mapping[str, Any], key: str, default: int | None, minimum: int) -> int:
    """A required (or defaulted) whole-number field of a spec mapping, at least `minimum`."""
    value = data.get(key, default)
    if value is None:
        raise SpecError(f"'{key}' is required")
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpecError(f"'{key}' must be a whole number, got {value!r}")
    if value < minimum:
        raise SpecError(f"'{key}' must be at least {minimum}, got {value}")
    return value


def _players(value: Any, gspec: GameSpec) -> tuple[int, ...]:
    if value is None:
        return (gspec.default_players,)
    values = value if isinstance(value, list) else [value]
    out: list[int] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise SpecError(f"players must be whole numbers, got {v!r}")
        if not gspec.min_players <= v <= gspec.max_players:
            raise SpecError(f"{gspec.title} takes {gspec.min_players}-{gspec.max_players} players, not {v}")
        if v not in out:
            out.append(v)
    if not out:
        raise SpecError("players must name at least one player count")
    return tuple(out)


def _grid(value: Any) -> tuple[dict[str, Any], ...]:
    """`{field: [values]}` is a cartesian product; a list of override maps is taken as is."""
    if value is None or value == {} or value == []:
        return ({},)
    if isinstance(value, Mapping):
        axes = []
        for key, options in value.items():
            if not isinstance(options, list) or not options:
                raise SpecError(f"grid field {key!r} needs a non-empty list of values, got {options!r}")
            axes.append([(key, o) for o in options])
        return tuple(dict(combo) for combo in itertools.product(*axes))
    if isinstance(value, list):
        if not all(isinstance(v, Mapping) for v in value):
            raise SpecError(
                "a grid list must hold override maps, e.g. [{variant: base}, {variant: fiendish}]"
            )
        out = tuple(dict(v) for v in value)
        if len({json.dumps(v, sort_keys=True) for v in out}) != len(out):
            raise SpecError("the grid lists the same overrides twice")
        return out
    raise SpecError(f"grid must be a mapping of field: [values] or a list of override maps, got {value!r}")


def _lineups(value: Any, gspec: GameSpec, players: tuple[int, ...]) -> tuple[Any, ...]:
    if value is None:
        return ("random",)
    if not isinstance(value, list) or not value:
        raise SpecError("lineups must be a non-empty list of bot line-ups")
    out: list[Any] = []
    for item in value:
        if isinstance(item, str):
            names = [item]
            norm: Any = item
        elif isinstance(item, list) and item and all(isinstance(b, str) for b in item):
            names = list(item)
            norm = list(item)
            if len(item) > 1 and len(item) not in players:
                raise SpecError(
                    f"line-up {item} names {len(item)} bots, but the sweep's player counts are {list(players)}"
                )
        elif isinstance(item, Mapping) and set(item) == {"hero", "field"}:
            names = [item["hero"], item["field"]]
            if not all(isinstance(b, str) for b in names):
                raise SpecError(f"line-up {dict(item)}: hero and field must be bot names")
            norm = {"hero": item["hero"], "field": item["field"]}
        else:
            raise SpecError(
                f"bad line-up {item!r}: use a bot name, a list of one bot per seat, or {{hero: X, field: Y}}"
            )
        for name in names:
            _check_bot(gspec, name)
        out.append(norm)
    for n in players:
        if not any(_lineup_for(x, n) for x in out):
            raise SpecError(f"no line-up fits {n} players")
    return tuple(out)


def _check_bot(gspec: GameSpec, text: str) -> None:
    """A bot must exist for the game and be reproducible (same seed, same moves)."""
    try:
        _name, params = parse_bot_spec(text)
        make_bot(gspec, text, 0)
    except BadConfig as exc:
        raise SpecError(f"bad bot {text!r}: {exc}") from None
    if "ms" in params:
        raise SpecError(
            f"bot {text!r} thinks for a wall-clock time, so its games would not replay; "
            "sweeps need a fixed budget (e.g. iterations=200)"
        )
