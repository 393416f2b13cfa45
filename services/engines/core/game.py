"""The game protocol every rules engine implements.

Shaped after OpenSpiel's Python games: a `GameSpec` holds the game's facts as data and makes
states; a `State` answers a small, fixed vocabulary (`to_act`, `legal_actions`, `apply`,
`is_terminal`, `returns`, `view`). The state always names the seat(s) that must decide now,
including out-of-turn answers (architecture decision 4), so engines, bots, the gateway and
sweeps drive every game with the same loop.

Actions are small integers whose meaning each game defines (`action_label`,
`action_detail`); integers keep random play fast and make an action list a compact,
replayable record (rulings G-2).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import orjson

from .config import config_from_mapping, config_to_dict
from .errors import BadConfig, BadState, IllegalAction
from .rng import Rng

if TYPE_CHECKING:
    from .presentation import Presentation

# The live tables' generator (deal_rng.py), imported when a state first needs it: sweeps and
# the engines' other paths never pay for the cipher library.
_DEAL_RNG: Any = None


def _deal_rng() -> Any:
    global _DEAL_RNG
    if _DEAL_RNG is None:
        from . import deal_rng

        _DEAL_RNG = deal_rng
    return _DEAL_RNG


# The shuffles a state may deal with, by the name its document records (docs/fairness.md,
# "Coupled deals"). 0, Fisher-Yates, is every state made before keyed shuffles and is what a
# document without a `shuffle` field means, so stored games, records and replays rebuild as
# they were dealt; 1, keyed, orders cards by seeded keys of their kind and copy index, so
# that configs differing in a card count deal their other cards alike (sweeps use it).
SHUFFLES: tuple[str, ...] = ("fisher-yates", "keyed")
FISHER_YATES = 0
KEYED = 1


def shuffle_index(name: str | int | None) -> int:
    """The number of a shuffle named in a record (None: Fisher-Yates, the older records)."""
    if name is None:
        return FISHER_YATES
    if type(name) is int and 0 <= name < len(SHUFFLES):
        return name
    if type(name) is str and name in SHUFFLES:
        return SHUFFLES.index(name)
    raise BadConfig(f"shuffle must be one of {', '.join(SHUFFLES)}, got {name!r}")


@dataclass(frozen=True, slots=True)
class Event:
    """One line of the public event log. Never holds hidden information (G-3).

    `payload`: the same facts for programs, keyed by the fields of the game's
    `<Game>EventPayload` message (the words every game shares: `card` an object, a
    targeted seat `target`), only those its kind carries (the game's proto.py, EVENTS)."""

    kind: str
    seat: int
    text: str
    payload: dict[str, Any] | None = None


class _SpecOf:
    """`State.spec`, for a class or an instance: the GameSpec made with that state class.

    GameSpec records itself here rather than setting a class attribute, because a state
    class compiled as an extension type (game.pxd) is immutable: its attributes cannot be
    set after the class is made. A subclass without a spec of its own has its base's."""

    def __get__(self, obj: object, owner: type) -> GameSpec:
        for klass in owner.__mro__:
            spec = _SPECS.get(klass)
            if spec is not None:
                return spec
        raise AttributeError(f"{owner.__name__} has no GameSpec")


_SPECS: dict[type, GameSpec] = {}


class State:
    """A whole game position: config, RNG, zones and the pending decision.

    Subclasses list their own mutable fields in `FIELDS`; the base class uses that list to
    clone, serialise and restore, so a game cannot forget a field in one of the three.
    Field values must be JSON-shaped: ints, strings, bools, None, and lists/dicts of them.

    Compiled, this is an extension type (Cython, game.pxd declares its attributes), so
    that compiled games read and write their fields without an instance dict; that is why
    it is no ABC (ABCMeta cannot make an extension type). The methods a game must provide
    are in `REQUIRED`: GameSpec refuses a state class that lacks one, and each raises
    NotImplementedError here.
    """

    FIELDS: ClassVar[tuple[str, ...]] = ()
    # Whether the game's __init__ takes `shuffle` and deals through `shuffle_cards` and
    # `deal_cards` (fairness.md, "Coupled deals"): a game that does not is dealt by
    # Fisher-Yates whatever is asked, and its states and records say so.
    KEYED_DEALS: ClassVar[bool] = False
    # Fields added to the documented form after states were already being stored (Redis,
    # replays, support cases), each with the builder of its default from the document and
    # the player count. A document lacking one is the older form: `from_json` fills the
    # default in (docs/state-json.md, "Older documents") instead of refusing a game that
    # was valid when it was written. A default must be true of any position: it may only
    # forget what the newer field records, never assert something.
    ADDED_FIELDS: ClassVar[dict[str, Callable[[dict[str, Any], int], Any]]] = {}
    spec = _SpecOf()
    if TYPE_CHECKING:  # game.pxd declares it for compiled builds
        rng: Any  # Rng (SplitMix64), or a live table's DealRng (ChaCha20)

    def __init__(
        self,
        config: Any,
        num_players: int,
        seed: int,
        deal_key: bytes | None = None,
        shuffle: int = FISHER_YATES,
    ) -> None:
        self.config = config
        self.num_players = num_players
        self.seed = seed
        self.shuffle = shuffle  # SHUFFLES' index: how `shuffle_cards` deals
        # SplitMix64 from the seed alone (sweeps, simulations, tests); a live table's deal
        # key makes it ChaCha20 instead, which no player can predict (docs/fairness.md).
        self.rng = Rng(seed) if deal_key is None else _deal_rng().DealRng(deal_key)
        self.turn = 0  # turns begun, counted for G-5's cap
        self.decisions = 0  # actions applied, by any seat
        self.log: list[Event] | None = None  # None: don't format events (simulation)

    def shuffle_cards(self, zone: list[int], tags: tuple[int, ...]) -> None:
        """Shuffle the card ids of `zone` with the state's shuffle: Fisher-Yates, or keyed by
        `tags` (`rng.card_tags` of the game's id -> kind table), which draws one number
        whatever the zone's size and keeps the order of cards two decks share."""
        if self.shuffle:
            self.rng.keyed_shuffle(zone, tags)
        else:
            self.rng.shuffle(zone)

    def deal_cards(self, zone: list[int], kinds: Sequence[int], reference: dict[int, int]) -> None:
        """Shuffle a fresh deck at setup: as `shuffle_cards`, except that a keyed deal is
        coupled with the `reference` deck (the default config's counts, `rng.coupled_order`),
        so a config one card short of it deals every other card where the default does."""
        if self.shuffle:
            self.rng.coupled_shuffle(zone, kinds, reference)
        else:
            self.rng.shuffle(zone)

    # What every game must define: GameSpec refuses a state class lacking one of these.
    REQUIRED: ClassVar[tuple[str, ...]] = (
        "to_act",
        "legal_actions",
        "_apply",
        "is_terminal",
        "winners",
        "view",
        "action_label",
        "check_invariants",
        "resample_hidden",
    )

    # --- the decision vocabulary --------------------------------------------------------
    def to_act(self) -> Sequence[int]:
        """Seats that must decide now; empty only when terminal."""
        raise NotImplementedError

    def legal_actions(self, seat: int) -> list[int]:
        """Legal actions for `seat` now; empty if it is not asked to decide."""
        raise NotImplementedError

    def _apply(self, seat: int, action: int) -> None:
        """Apply an action already known to be legal."""
        raise NotImplementedError

    def is_terminal(self) -> bool:
        """True once the game is over."""
        raise NotImplementedError

    def winners(self) -> list[int]:
        """Winning seats once terminal; empty for a draw (G-5)."""
        raise NotImplementedError

    def view(self, seat: int | None) -> dict[str, Any]:
        """What `seat` may see (G-3); `None` is a spectator's public view."""
        raise NotImplementedError

    def action_label(self, action: int) -> str:
        """Words for an action, for logs, buttons and error messages."""
        raise NotImplementedError

    def action_detail(self, action: int) -> dict[str, Any]:
        """Structured form of an action (fields of the game's ActionDetail message)."""
        return {}

    def action_text_key(self, action: int) -> Hashable | None:
        """What `action_label` and `action_detail` of `action` depend on besides the config,
        where that is less than the position: the engine then builds the action's message
        once per config and key, instead of asking for its words (and packing them) on
        every answer, which was a quarter of an Apply's handler. None, the default, and the
        answer for any action whose words read the position: ask every time. A game that
        overrides this is checked by tests/core/test_action_text_keys.py."""
        return None

    def check_invariants(self) -> None:
        """Raise BadState if the position is impossible (lost or doubled cards...)."""
        raise NotImplementedError

    def resample_hidden(self, observer: int, rng: Rng) -> None:
        """Re-deal every card `observer` cannot see, keeping zone sizes and public facts.

        Used by IS-MCTS determinisation and by leak tests: `view(observer)` must not change.
        """
        raise NotImplementedError

    # --- provided -----------------------------------------------------------------------
    def apply(self, seat: int, action: int, legal: Sequence[int] | None = None) -> None:
        """Apply `action` for `seat` after checking it is legal now (the checked path).

        A seat not asked to decide, or any seat once the game is over, has no legal action
        (the protocol above), so one `legal_actions` call is the whole check on the path
        every decision takes; the slower questions only pick the error's words. `legal` is
        `legal_actions(seat)` of this very position, for a caller that already has it (the
        engine keeps it with the states it issued, issued.py)."""
        if legal is None:
            legal = self.legal_actions(seat)
        if not _holds(legal, action):
            raise _illegal(self, seat, action, legal)
        self._apply(seat, action)
        self.decisions += 1

    def emit(self, kind: str, seat: int, text: str, *args: Any, **payload: Any) -> None:
        """Log an event, its text `text.format(*args)` when given args, its `payload` the
        keyword arguments: formatting waits until someone is listening, and simulations
        (sweeps, search, random play) run with the log off, so most events are never
        formatted at all."""
        if self.log is not None:
            self.log.append(Event(kind, seat, text.format(*args) if args else text, payload))

    def returns(self) -> list[float]:
        """1 for a winner, 0 for a loser; a draw shares one point equally."""
        n = self.num_players
        if not self.is_terminal():
            return [0.0] * n
        won = self.winners()
        if not won:
            return [1.0 / n] * n
        return [1.0 if s in won else 0.0 for s in range(n)]

    def score_breakdown(self) -> list[tuple[float, dict[str, float]]]:
        """Per seat, once terminal: the game's own score total and its named parts, so a
        finished table can say why it ended as it did, not only who won. Games that keep
        a score override this; the default is the result alone."""
        return [(r, {"result": r}) for r in self.returns()]

    def clone(self) -> State:
        new = self.__class__.__new__(self.__class__)
        new.config = self.config
        new.num_players = self.num_players
        new.seed = self.seed
        new.shuffle = self.shuffle
        rng = self.rng
        new.rng = Rng.from_state(rng.state) if type(rng) is Rng else rng.copy()
        new.turn = self.turn
        new.decisions = self.decisions
        new.log = None
        for name in self.FIELDS:
            setattr(new, name, _copy(getattr(self, name)))
        return new

    def to_json(self) -> dict[str, Any]:
        """The documented JSON form (docs/state-json.md), sharing nothing with the state."""
        return self.json_view(copy=True)

    def json_view(self, copy: bool = False) -> dict[str, Any]:
        """The JSON form; without `copy` it shares the state's lists and a cached config
        dict, for serialising at once (the engines' hot path)."""
        doc: dict[str, Any] = {
            "game": self.spec.name,
            "format": FORMAT,
            "players": self.num_players,
            "seed": self.seed,
            "config": config_to_dict(self.config) if copy else _config_json(self.config),
            "rng": self.rng.state,
            "turn": self.turn,
            "decisions": self.decisions,
        }
        if self.shuffle:  # absent means Fisher-Yates, as every older document was dealt
            doc["shuffle"] = SHUFFLES[self.shuffle]
        if type(self.rng) is not Rng:  # a live table's generator; absent means SplitMix64
            doc["generator"] = self.rng.kind
            doc["deal_key"] = self.rng.key.hex()
        for name in self.FIELDS:
            doc[name] = _copy(getattr(self, name)) if copy else getattr(self, name)
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any], copy: bool = True, trusted: bool = False) -> State:
        """Rebuild and validate; any inconsistency is BadState, never a crash later.

        `copy=False` adopts the document's lists instead of copying them, for callers that
        parsed the document themselves and drop it (the engines' hot path). `trusted`
        skips `check_invariants` for documents an engine's MAC vouches for (serial.py).
        """
        try:
            if type(doc.get("format")) is not int or doc.get("format") != FORMAT:
                raise BadState(f"unknown state format {doc.get('format')!r}, expected {FORMAT}")
            if doc.get("game") != cls.spec.name:
                raise BadState(f"state is for game {doc.get('game')!r}, not {cls.spec.name!r}")
            if type(doc["config"]) is not dict:
                raise BadState(f"config must be an object of field: value, got {doc['config']!r}")
            config = _cached_config(cls.spec.config_class, orjson.dumps(doc["config"]))
            players = doc["players"]
            if type(players) is not int or not (cls.spec.min_players <= players <= cls.spec.max_players):
                raise BadState(f"bad player count {players!r}")
            doc = cls.upgrade(doc, players)
            new = cls.__new__(cls)
            new.config = config
            new.num_players = players
            new.seed = _whole(doc, "seed", -_U64, _U64)
            new.rng = _rng_of(doc)
            shuffle = doc.get("shuffle")
            if shuffle is not None and (type(shuffle) is not str or shuffle not in SHUFFLES[1:]):
                raise BadState(
                    f"shuffle must be one of {', '.join(SHUFFLES[1:])} where one is named, got {shuffle!r}"
                )
            new.shuffle = FISHER_YATES if shuffle is None else SHUFFLES.index(shuffle)
            new.turn = _whole(doc, "turn", 0, _U64)
            new.decisions = _whole(doc, "decisions", 0, _U64)
            new.log = None
            for name in cls.FIELDS:
                setattr(new, name, _copy(doc[name]) if copy else doc[name])
            if not trusted:
                for name in cls.FIELDS:
                    _json_shaped(name, doc[name])
                new.check_invariants()
        except BadState:
            raise
        except KeyError as exc:
            raise BadState(f"state is missing field {exc.args[0]!r}") from None
        except (TypeError, ValueError, IndexError, AttributeError) as exc:
            raise BadState(f"state is unreadable: {exc}") from None
        return new

    @classmethod
    def upgrade(cls, doc: dict[str, Any], players: int) -> dict[str, Any]:
        """The older documented form -> the current one: a copy of `doc` with every field in
        `ADDED_FIELDS` that it lacks filled with its default (the caller's dict is left as
        it was). A current document comes back as it is."""
        missing = [name for name in cls.ADDED_FIELDS if name not in doc]
        if not missing:
            return doc
        doc = dict(doc)
        for name in missing:
            doc[name] = cls.ADDED_FIELDS[name](doc, players)
        return doc

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.to_json() == other.to_json()

    __hash__ = None  # type: ignore[assignment]


FORMAT = 1


def _illegal(state: State, seat: int, action: int, legal: Sequence[int]) -> IllegalAction:
    """Why `action` is refused, in words (`State.apply`'s error, kept out of its body: a
    compiled `cpdef` method may not hold the generator that lists the legal actions)."""
    if state.is_terminal():
        return IllegalAction("the game is over")
    if seat not in state.to_act():
        return IllegalAction(
            f"seat {seat} is not asked to decide now (waiting for seats {list(state.to_act())})"
        )
    return IllegalAction(
        f"action {action} is not legal for seat {seat} now; legal: "
        + "; ".join(f"{a}={state.action_label(a)}" for a in legal[:20])
    )


def _holds(legal: Sequence[int], action: Any) -> bool:
    """`action in legal`, on the path of every decision. An int against a list of ints,
    the rules' own case, is compared as C integers when built (game.pxd), where `in` pays
    a rich comparison per entry; anything else, or an entry that is no int or does not
    fit a C long, is left to `in` itself, so the answer is always `in`'s."""
    if type(action) is not int or type(legal) is not list:
        return action in legal
    try:
        wanted = action  # a C long when built: OverflowError past it
        for entry in legal:
            found = entry  # likewise, and TypeError for what is no int
            if found == wanted:
                return True
    except (OverflowError, TypeError):
        return action in legal
    return False


_CONFIG_JSON: dict[int, tuple[Any, dict[str, Any]]] = {}


def _config_json(config: Any) -> dict[str, Any]:
    """A config's JSON dict, built once per config object (configs are frozen)."""
    hit = _CONFIG_JSON.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    if len(_CONFIG_JSON) > 1024:
        _CONFIG_JSON.clear()
    as_dict = config_to_dict(config)
    _CONFIG_JSON[id(config)] = (config, as_dict)
    return as_dict


_SORTED = orjson.OPT_SORT_KEYS
_U64 = 1 << 64


def _whole(doc: dict[str, Any], name: str, lo: int, hi: int) -> int:
    """A common field that must be a JSON whole number: `"1"`, `1.0` and `true` are refused,
    never converted, so a document is accepted only as it would be written back."""
    value = doc[name]
    if type(value) is not int or not lo <= value < hi:
        raise BadState(f"{name} must be a whole number in {lo}..{hi - 1}, got {value!r}")
    return value


def _rng_of(doc: dict[str, Any]) -> Any:
    """The document's generator: SplitMix64 at `rng` when it names none (every document
    written before live tables dealt from ChaCha20 reads the same as it always did), or
    ChaCha20 under `deal_key` at word `rng`."""
    position = _whole(doc, "rng", 0, _U64)
    if "generator" not in doc and "deal_key" not in doc:
        return Rng.from_state(position)
    kind, key = doc.get("generator"), doc.get("deal_key")
    deal_rng = _deal_rng()
    if kind != deal_rng.KIND:
        raise BadState(f"generator must be {deal_rng.KIND!r} where one is named, got {kind!r}")
    if type(key) is not str or len(key) != 2 * deal_rng.KEY_BYTES or key != key.lower():
        raise BadState(f"deal_key must be {2 * deal_rng.KEY_BYTES} lower-case hex digits")
    try:
        return deal_rng.DealRng.from_state(bytes.fromhex(key), position)
    except ValueError:
        raise BadState(f"deal_key must be {2 * deal_rng.KEY_BYTES} lower-case hex digits") from None


def _json_shaped(path: str, value: Any) -> None:
    """Refuse a value no state ever holds: a float, or an object key that is not text.

    Each game's `check_invariants` decides which ints, strings, bools and lists a field
    may hold; this catches the one kind no field of any game takes, wherever it hides.
    """
    kind = type(value)
    if kind is list:
        for i, item in enumerate(value):
            if type(item) not in (int, str, bool):
                _json_shaped(f"{path}[{i}]", item)
    elif kind is dict:
        for key, item in value.items():
            _json_shaped(f"{path}.{key}", item)
    elif kind not in (int, str, bool, type(None)):
        raise BadState(f"{path} holds {value!r}; a state holds whole numbers, text, true/false and null only")


@functools.lru_cache(maxsize=256)
def _cached_config(config_class: type, encoded: bytes) -> Any:
    """Configs are frozen, and a server sees the same few again and again: building one
    from its mapping costs more than the rest of a restore, so build each once.

    The mapping must already be in the config's own kinds (`"13"` or `13.0` for a whole
    number is refused, where `--set` would convert it): a state document is read exactly
    as it was written, or not at all.
    """
    values = orjson.loads(encoded)
    try:
        config: Any = config_from_mapping(config_class, values)
    except BadConfig as exc:
        raise BadState(f"config: {exc}") from None
    written = config_to_dict(config)
    for key, value in values.items():
        if orjson.dumps(written[key], option=_SORTED) != orjson.dumps(value, option=_SORTED):
            raise BadState(f"config field {key!r} must be written as {written[key]!r}, got {value!r}")
    return config


def _copy(value: Any) -> Any:
    """Deep copy for JSON-shaped values; much faster than copy.deepcopy."""
    if type(value) is list:
        if value and type(value[0]) in (list, dict):
            return [_copy(v) for v in value]
        return value[:]
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    return value


def _defined_by(klass: type, name: str) -> type | None:
    """The class in `klass`'s MRO whose own body defines `name`."""
    return next((k for k in klass.__mro__ if name in vars(k)), None)


BotFactory = Callable[..., Any]


@dataclass(frozen=True)
class GameSpec:
    """A game's facts as data, and the one way to start a state of it."""

    name: str
    title: str
    min_players: int
    max_players: int
    default_players: int
    config_class: type
    state_class: type[State]
    variants: tuple[str, ...] = ()
    # The names a config field takes, where it takes names (a string, or a list of them):
    # what a form offers as choices instead of free text. The config's own check decides.
    config_choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # Bots beyond `random` that this game provides, by name (e.g. "heuristic").
    bots: dict[str, BotFactory] = field(default_factory=dict)
    # Estimated returns of a non-terminal state, for search bots that stop rollouts early;
    # None means "play rollouts to the end".
    evaluate: Callable[[Any], list[float]] | None = None  # takes the game's own state class
    summary: str = ""
    # Partnerships by player count: the seats of each team, where partners share a win
    # (Tricky Cultists, TK-2). None: every seat plays for itself. Sweeps, the ladder and the
    # reports all read teams from here, so a team game is never counted seat by seat.
    teams: Callable[[int], list[list[int]]] | None = None
    # The fewest seats a given config takes, where a variant switch seats fewer than the
    # usual rules (CC-2); None: `min_players` for every config.
    least_players: Callable[[Any], int] | None = None
    # How the game reads on the pages (card texts and titles, prompts, which moves are
    # public): its package's presentation.py. None: plain words (core/presentation.py).
    presentation: Presentation | None = None

    def __post_init__(self) -> None:
        missing = [name for name in State.REQUIRED if _defined_by(self.state_class, name) is State]
        if missing:
            raise TypeError(f"{self.state_class.__name__} does not define {', '.join(missing)}")
        _SPECS[self.state_class] = self

    def team_seats(self, players: int) -> list[list[int]]:
        """The seats of each team at `players` seats: partnerships, or one seat each."""
        return [list(t) for t in self.teams(players)] if self.teams else [[s] for s in range(players)]

    def has_partners(self, players: int) -> bool:
        """True when some team has more than one seat: the team, not the seat, is the unit."""
        return any(len(t) > 1 for t in self.team_seats(players))

    def min_players_for(self, config: Any) -> int:
        """The fewest seats `config` takes: what a lobby offers (Describe publishes it for
        the default config), where `min_players` is the fewest any config takes."""
        return self.min_players if self.least_players is None else self.least_players(config)

    def make_config(self, values: dict[str, Any] | None = None) -> Any:
        if not values:
            # Every game started with the defaults shares one config, from the cache that
            # restored states use: building and validating it again was ~1,000 instructions
            # per decision of a random game (callgrind), more than its deal.
            return _cached_config(self.config_class, b"{}")
        return config_from_mapping(self.config_class, values)

    def new_state(
        self,
        config: Any = None,
        num_players: int | None = None,
        seed: int = 0,
        deal_key: bytes | None = None,
        shuffle: str | int | None = None,
    ) -> State:
        """A fresh game; with `deal_key` (a live table's, 32 bytes) it deals from ChaCha20
        under that key, otherwise from SplitMix64 seeded with `seed`. `shuffle` names how it
        shuffles (SHUFFLES; None is Fisher-Yates, what every record without one was dealt
        with)."""
        from .errors import BadConfig

        players = self.default_players if num_players is None else num_players
        if not (self.min_players <= players <= self.max_players):
            raise BadConfig(
                f"{self.title} takes {self.min_players}-{self.max_players} players, not {players}"
            )
        if config is None or isinstance(config, dict):
            config = self.make_config(config)
        kind = shuffle_index(shuffle)
        if kind and self.state_class.KEYED_DEALS:
            return self.state_class(config, players, seed, deal_key, kind)
        if deal_key is None:
            return self.state_class(config, players, seed)
        return self.state_class(config, players, seed, deal_key)
