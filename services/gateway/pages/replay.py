"""Replays rebuilt in-process with the rules library, step by step.

Two sources lead to the same thing, a list of `[seat, action]` moves from a seed and a
config (rulings G-2):

- a finished table: the gateway's own replay record (`TableService.replay`);
- a sweep's game: game, players, seed, config overrides and bot line-up, re-simulated with
  `services.engines.core.play.play_game`, exactly as the sweep played it (sweeps store no
  action lists; the report links `/replay?game=..&seed=..`).

Why in-process and not over gRPC: stepping back and forth and showing every seat's view at
once would cost an engine round trip (`Apply` chain, then `View` per seat) for each click;
the rules library is the very code the engines run, it is deterministic, and it is already a
dependency of the gateway (the engines' message types). Replays hold no table and write
nothing, so the gateway's "no rules, no state" rule for live play is untouched: live moves
still only ever go through the engines.

A `Replay` keeps a clone of the state every `CHECKPOINT_EVERY` moves, so any step is at most
that many re-applied moves away; built replays are kept in a small per-process LRU cache
(a page steps through the same game many times).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from google.protobuf import json_format
from pydantic import ConfigDict, Field

from services.engines.core.bots import bot_names
from services.engines.core.config import check_limits, config_to_dict
from services.engines.core.errors import EngineError
from services.engines.core.game import GameSpec, State
from services.engines.core.messages import GameMessages, load_messages, message_to_dict
from services.engines.core.play import play_game
from services.engines.registry import load_game
from services.platform.bounds import check_bot
from services.platform.errors import PlatformError
from services.platform.tables import TableService

from ..offload import run_cpu_bound
from ..schemas import Body, GameName, validate
from ..table_configs import seat_bounds
from .present import bot_words, display_name, presentation

SEED_LIMIT = 2**64 - 1  # NewGameRequest.seed is a uint64
SEATS = seat_bounds()  # some installed game's


class ReplayQuery(Body):
    """What names a replay, in the page's URL and the replay API's query alike."""

    model_config = ConfigDict(strict=False)  # query strings are text: "7" is 7

    table: str | None = Field(
        None, pattern=r"^[0-9a-f]{16}$", description="a finished table's id (instead of game + seed)"
    )
    game: GameName | None = Field(None, description="with `seed`: a sweep's game")
    players: int | None = Field(
        None, ge=SEATS[0], le=SEATS[1], description="seats (default: the game's default)"
    )
    seed: int | None = Field(None, ge=0, le=SEED_LIMIT)
    config: str | None = Field(None, max_length=4096, description="config overrides as a JSON object")
    bots: str | None = Field(
        None,
        max_length=1024,
        description="one bot for every seat, or one per seat (`,` or `;` between seats)",
    )
    shuffle: Literal["keyed", "fisher-yates"] | None = Field(
        None, description="how the sweep dealt it (docs/fairness.md); default fisher-yates, as older sweeps"
    )


class SeatQuery(Body):
    """Whose view of a replay: the page's and the replay API's `?seat=`."""

    model_config = ConfigDict(strict=False)

    seat: str = Field(
        "-1",
        pattern=r"^(all|-1|[0-9]{1,2})$",
        description="a seat, -1 for a spectator, or `all` for every seat's view (all cards open)",
    )


CHECKPOINT_EVERY = 32
MAX_CACHED = 16
MAX_SIMULATED_DECISIONS = 20_000
# Wall-clock cap of one rebuild (a sweep game played again with its bots); Settings'
# replay_build_seconds overrides it per app.
BUILD_SECONDS = 10.0


@dataclass(frozen=True)
class Move:
    """One applied action: `step` is the position it leads to (1-based)."""

    step: int
    seat: int
    action: int
    label: str
    public: bool = True  # whether the label names only what every seat saw (the game's public_moves)

    def as_json(self) -> dict[str, Any]:
        return {"step": self.step, "seat": self.seat, "action": self.action, "label": self.label}


@dataclass(frozen=True)
class Source:
    """Where a replay comes from: a table id, or the fields a sweep's game is fixed by."""

    game: str
    table: str | None = None
    players: int | None = None
    seed: int | None = None
    config: str = "{}"  # overrides as canonical JSON text (hashable, and what the URL carries)
    bots: tuple[str, ...] = ()
    shuffle: str | None = None  # game.SHUFFLES; None: Fisher-Yates, as sweeps before keyed deals

    def key(self) -> str:
        if self.table is not None:
            return f"table:{self.table}"
        return (
            f"game:{self.game}:{self.players}:{self.seed}:{self.config}:{';'.join(self.bots)}:{self.shuffle}"
        )

    def query(self) -> dict[str, Any]:
        """The query string that names this source (the page's and the API's)."""
        if self.table is not None:
            return {"table": self.table}
        out = {
            "game": self.game,
            "players": self.players,
            "seed": self.seed,
            "config": self.config,
            "bots": ";".join(self.bots) if any(":" in b for b in self.bots) else ",".join(self.bots),
        }
        if self.shuffle is not None:
            out["shuffle"] = self.shuffle
        return out


def view_json(messages: GameMessages, state: State, seat: int, legal: bool = True) -> dict[str, Any]:
    """What `seat` (-1: a spectator) sees, in the very JSON shape the live match API gives
    (`EngineClients.view_json`), so one template renders live, past and replayed positions."""
    body = json_format.ParseDict(state.view(None if seat < 0 else seat), messages.view())
    terminal = state.is_terminal()
    actions = state.legal_actions(seat) if legal and seat >= 0 and not terminal else []
    return {
        "seat": seat,
        "view": message_to_dict(body),
        "legal_actions": [action_json(messages, state, a) for a in actions],
        "to_act": [] if terminal else list(state.to_act()),
        "terminal": terminal,
        "winners": state.winners() if terminal else [],
        "turn": state.turn,
        "decisions": state.decisions,
    }


def action_json(messages: GameMessages, state: State, action: int) -> dict[str, Any]:
    detail = json_format.ParseDict(state.action_detail(action), messages.action())
    return {"id": action, "label": state.action_label(action), "detail": message_to_dict(detail)}


def split_bots(text: str) -> list[str]:
    """A line-up by seat. Seats are split on `;` when there is one; otherwise on `,`, where a
    piece that is only `key=value` belongs to the bot spec before it (sweep reports join
    seats with `,` even when a spec such as `ismcts:iterations=200,rollout=heuristic` holds
    commas of its own)."""
    if ";" in text:
        return [p.strip() for p in text.split(";") if p.strip()]
    seats: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if seats and ":" in seats[-1] and ":" not in piece and "=" in piece:
            seats[-1] = f"{seats[-1]},{piece}"
        else:
            seats.append(piece)
    return seats


class Replay:
    """A game rebuilt move by move: labels, events and the view of any seat at any step."""

    def __init__(
        self,
        spec: GameSpec,
        config: dict[str, Any],
        players: int,
        seed: int,
        actions: Sequence[Sequence[int]],
        source: Source,
        seat_names: list[str],
        bots: list[str] | None = None,
        deal_key: bytes | None = None,
        shuffle: str | None = None,
    ) -> None:
        self.spec = spec
        self.messages: GameMessages = load_messages(spec.name)
        self.config = config
        self.players = players
        self.seed = seed
        self.source = source
        self.seat_names = seat_names
        self.bots = bots
        self._config_obj = spec.make_config(config)
        self.moves: list[Move] = []
        self.events: list[list[dict[str, Any]]] = [[]]  # per step; step 0 is the deal
        self._checkpoints: list[State] = []
        # the table's deal, or the sweep's keyed one (fairness.md)
        state = spec.new_state(self._config_obj, players, seed, deal_key, shuffle)
        for n, (seat, action) in enumerate(actions):
            if n % CHECKPOINT_EVERY == 0:
                self._checkpoints.append(state.clone())
            label = state.action_label(action)
            public = state.action_detail(action).get("kind") in presentation(spec.name).public_moves
            state.log = []
            state.apply(seat, action)  # checked: a record that does not replay is refused
            self.moves.append(Move(n + 1, seat, action, label, public))
            self.events.append([{"kind": e.kind, "seat": e.seat, "text": e.text} for e in state.log])
        if len(self.moves) % CHECKPOINT_EVERY == 0:
            self._checkpoints.append(state.clone())
        self.final = state
        self.terminal = state.is_terminal()
        self.winners = state.winners() if self.terminal else []

    @property
    def steps(self) -> int:
        return len(self.moves)

    def state_at(self, step: int) -> State:
        """The position after `step` moves (0: the deal), a fresh state the caller owns."""
        if not 0 <= step <= self.steps:
            raise PlatformError(404, "unknown_step", f"this replay has steps 0-{self.steps}")
        if step == self.steps:
            return self.final.clone()
        base = step // CHECKPOINT_EVERY
        state = self._checkpoints[base].clone()
        for move in self.moves[base * CHECKPOINT_EVERY : step]:
            state.apply(move.seat, move.action)
        return state

    def view_json(self, state: State, seat: int) -> dict[str, Any]:
        return view_json(self.messages, state, seat)

    def step_json(self, step: int, seats: list[int]) -> dict[str, Any]:
        """One step: the move that led here, its events, the next move, and the views."""
        state = self.state_at(step)
        return {
            "step": step,
            "steps": self.steps,
            "move": self.moves[step - 1].as_json() if step > 0 else None,
            "events": self.events[step],
            "next": self.moves[step].as_json() if step < self.steps else None,
            "views": [self.view_json(state, s) for s in seats],
        }

    def summary(self) -> dict[str, Any]:
        return {
            "source": self.source.query(),
            "game": self.spec.name,
            "title": self.spec.title,
            "players": self.players,
            "seed": self.seed,
            "config": self.config,
            "bots": self.bots,
            "seat_names": self.seat_names,
            "steps": self.steps,
            "moves": [m.as_json() for m in self.moves],
            "terminal": self.terminal,
            "winners": self.winners,
            "turn": self.final.turn,
        }

    def seats_for(self, which: str | None) -> tuple[str, list[int]]:
        """`which` as the page and API spell it: a seat number, -1 (spectator) or "all"
        (every seat's private view: all cards open). Returns (normalised, seats)."""
        text = (which or "").strip()
        text = validate(SeatQuery, {"seat": text} if text else {}).seat
        if text == "all":
            return "all", list(range(self.players))
        seat = int(text)
        if not -1 <= seat < self.players:
            raise PlatformError(
                404, "unknown_seat", f"this game has seats 0-{self.players - 1} (or -1, 'all')"
            )
        return str(seat), [seat]


def _spec(game: str) -> GameSpec:
    try:
        return load_game(game)
    except KeyError:
        raise PlatformError(404, "unknown_game", f"no game {game!r}") from None


def parse_config(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        config = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise PlatformError(400, "invalid_config", "'config' is a JSON object of config fields") from None
    if not isinstance(config, dict):
        raise PlatformError(400, "invalid_config", "'config' is a JSON object of config fields")
    return config


def game_source(
    game: str,
    players: int | None,
    seed: int,
    config: dict[str, Any],
    bots: str | None,
    shuffle: str | None = None,
) -> Source:
    """Check a sweep game's fields (400 with the library's words) and name it canonically."""
    spec = _spec(game)
    players = spec.default_players if players is None else players
    if not spec.min_players <= players <= spec.max_players:
        raise PlatformError(
            400, "invalid_players", f"{spec.title} takes {spec.min_players}-{spec.max_players} players"
        )
    if not 0 <= seed <= SEED_LIMIT:
        raise PlatformError(400, "malformed", f"'seed' is from 0 to {SEED_LIMIT}")
    try:
        check_limits(spec.config_class, config)  # the bounds the engine's Describe publishes
        made = spec.make_config(config)
        spec.new_state(made, players, seed, None, shuffle)  # what the rules refuse for this table (CC-2)
        normal = config_to_dict(made)
    except (EngineError, TypeError, ValueError) as exc:
        raise PlatformError(400, "invalid_config", f"config for {game}: {exc}") from None
    defaults = config_to_dict(spec.make_config({}))
    overrides = {k: v for k, v in normal.items() if defaults.get(k) != v}
    lineup = split_bots(bots or "random")
    if len(lineup) == 1:
        lineup = lineup * players
    if len(lineup) != players:
        raise PlatformError(400, "invalid_bots", f"'bots' names {len(lineup)} bots for {players} seats")
    for name in set(lineup):
        try:
            check_bot(game, name, bot_names(spec))  # the lobby's bounds: iterations, depth, rollouts
        except PlatformError as exc:
            if exc.code == "bot_limit":
                raise
            raise PlatformError(400, "invalid_bots", exc.message) from None
    return Source(
        game=game,
        players=players,
        seed=seed,
        config=orjson.dumps(overrides, option=orjson.OPT_SORT_KEYS).decode(),
        bots=tuple(lineup),
        shuffle=None if shuffle in (None, "fisher-yates") else shuffle,
    )


def simulate(source: Source, seconds: float = BUILD_SECONDS) -> Replay:
    """Play the sweep's game again with its bots (the same seeds per seat as the sweep),
    for at most `seconds` of wall-clock time: past it the request gets 503, and the
    worker's thread is free again."""
    spec = _spec(source.game)
    config = orjson.loads(source.config)
    assert source.players is not None and source.seed is not None
    deadline = time.monotonic() + seconds
    try:
        record = play_game(
            spec,
            spec.make_config(config),
            source.players,
            source.seed,
            list(source.bots),
            deadline=deadline,
            shuffle=source.shuffle,
        )
    except EngineError as exc:  # a config the rules refuse only once dealt
        raise PlatformError(400, "invalid_config", str(exc)) from None
    except TimeoutError:
        raise PlatformError(
            503, "too_slow", f"rebuilding this game took over {seconds:g} s; ask with cheaper bots"
        ) from None
    if record.decisions > MAX_SIMULATED_DECISIONS:
        raise PlatformError(400, "too_long", f"the game took {record.decisions} decisions; replays stop at "
                       f"{MAX_SIMULATED_DECISIONS}")  # fmt: skip
    names = [f"{bot_words(b)} {s}" for s, b in enumerate(source.bots)]  # as a live table names bots
    return Replay(
        spec, config, source.players, source.seed, record.actions, source, names, list(source.bots),
        shuffle=source.shuffle,
    )  # fmt: skip


def from_record(record: dict[str, Any], source: Source, seat_names: list[str]) -> Replay:
    """A finished table's replay record (`GET /api/tables/{id}/replay`)."""
    spec = _spec(record["game"])
    key = bytes.fromhex(record["deal_key"]) if record.get("deal_key") else None
    try:
        return Replay(
            spec, record["config"], record["players"], record["seed"], record["actions"], source, seat_names,
            deal_key=key,
        )  # fmt: skip
    except EngineError as exc:  # the record does not replay: the rules changed since
        raise PlatformError(409, "replay_mismatch", f"the table's moves do not replay: {exc}") from None


class ReplayCache:
    """A few recently built replays per process, by source; building is the slow part."""

    def __init__(self, size: int = MAX_CACHED) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, Replay] = OrderedDict()

    def get(self, source: Source, build: Callable[[], Replay]) -> Replay:
        key = source.key()
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                return found
        # Outside the lock, and off the request loop: a slow simulation blocks nothing else.
        replay = run_cpu_bound(build)
        with self._lock:
            self._items[key] = replay
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return replay


def seat_name(seat: Any) -> str:
    """A finished table's seat as its live page named it (issue 31: one naming scheme):
    its player, or its bot in words ("Steady bot 1")."""
    return display_name(seat)


class Replays:
    """Finds the replay a request names (`?table=` or `?game=&seed=...`), building it once."""

    def __init__(
        self,
        tables: TableService,
        games: Sequence[str],
        cache: ReplayCache | None = None,
        build_seconds: float = BUILD_SECONDS,
    ) -> None:
        self.tables = tables
        self.games = list(games)
        self.cache = cache or ReplayCache()
        self.build_seconds = build_seconds

    def source(self, args: Mapping[str, str]) -> Source:
        # An empty parameter (a form's blank field) is a parameter left out.
        query = validate(ReplayQuery, {k: v for k, v in args.items() if v != ""})
        if query.table and query.game:
            raise PlatformError(
                400, "malformed", "name either a 'table' or a 'game' (with its seed), not both"
            )
        if query.table:
            table = self.tables.get(query.table)
            return Source(game=table.game, table=table.id)
        game = query.game
        if not game:
            raise PlatformError(400, "malformed", "name a finished 'table', or a 'game' with its 'seed'")
        if game not in self.games:
            raise PlatformError(404, "unknown_game", f"no game {game!r}; known: {', '.join(self.games)}")
        if query.seed is None:
            raise PlatformError(400, "malformed", "'seed' is required with 'game'")
        return game_source(
            game, query.players, query.seed, parse_config(query.config), query.bots, query.shuffle
        )

    def get(self, args: Mapping[str, str]) -> Replay:
        source = self.source(args)
        if source.table is None:
            return self.cache.get(source, lambda: simulate(source, self.build_seconds))
        record = self.tables.replay(source.table)  # 409 until the game is over
        table = self.tables.get(source.table)
        names = [seat_name(s) for s in table.seats]
        return self.cache.get(source, lambda: from_record(record, source, names))
