"""What can happen to a live table: open, join, leave, look, move, and bots or the clock
moving for a seat. Used by the HTTP handlers and by the Celery table tasks alike, so a bot's
move and a human's move take exactly the same path to the same atomic commit.

No rules live here: legality, views and bot choices are the engine's (architecture decisions
4 and 5). The gateway checks only who may speak for a seat and at which version.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import orjson

from services.engines.core.messages import GameMessages

from .bounds import check_bot, check_config, check_table_bots
from .deal import deal_key
from .dispatch import TaskQueue
from .engines import EngineClients
from .errors import PlatformError
from .packing import unpack_legal
from .ratings import RatingBook
from .settings import Settings
from .store import Table, TableStore, final_scores, hash_token

log = logging.getLogger("cultists.gateway.tables")

TABLE_ID = re.compile(r"^[0-9a-f]{16}$")
SEED_LIMIT = 2**63 - 1
# Views kept per process for streams (TableService._view_of): a few per live table watched.
VIEW_CACHE_SIZE = 4096


def new_table_id() -> str:
    return secrets.token_hex(8)


def default_bot(bots: list[str]) -> str:
    """The bot that plays for a seat whose player is absent: the strongest cheap one offered."""
    return "heuristic" if "heuristic" in bots else "random"


def is_bots_only(table: Table) -> bool:
    """No human plays here (none was seated, or every one left): nobody waits for the bots."""
    return all(seat.kind == "bot" for seat in table.seats)


def bot_seed(table_seed: int, seat: int, version: int) -> int:
    """A bot's choice is fixed by the table and the position, so a retried task repeats it."""
    digest = hashlib.blake2b(f"{table_seed}:{seat}:{version}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & SEED_LIMIT


def table_seed(chosen: int | None, humans: int) -> tuple[int, str]:
    """The seed a table is dealt from, and where it came from (every player sees which).

    A seed the opener chose fixes the deal, and any seed can be rebuilt through
    `/api/replays?game=..&seed=..` with every hand open: so it is used as given only where
    at most one human sits (a practice table against bots, never rated). With two or more
    humans it is mixed with a fresh server secret, so nobody at the table, opener
    included, can predict the deal; the table says "mixed" so nobody is misled about what
    the chosen number did. No seed: a fresh server secret ("server")."""
    if chosen is None:
        return secrets.randbits(63), "server"
    if humans <= 1:
        return chosen, "chosen"
    secret = secrets.token_bytes(16)
    digest = hashlib.blake2b(f"{chosen}".encode(), key=secret, digest_size=8).digest()
    return int.from_bytes(digest, "big") & SEED_LIMIT, "mixed"


@dataclass
class TablePlan:
    """A table's record made but not yet written (TableService.plan_table)."""

    table_id: str
    record: dict[str, Any]
    created: float
    expire: int | None

    def to_json(self) -> bytes:
        """For keeping beside matchmaking's tickets: bytes (the state, legal lists) as base64."""
        record = {
            k: {"b64": base64.b64encode(v).decode()} if isinstance(v, bytes) else v
            for k, v in self.record.items()
        }
        return orjson.dumps(
            {"table": self.table_id, "record": record, "created": self.created, "expire": self.expire}
        )

    @classmethod
    def from_json(cls, raw: bytes) -> TablePlan:
        doc = orjson.loads(raw)
        record = {
            k: base64.b64decode(v["b64"]) if isinstance(v, dict) else v for k, v in doc["record"].items()
        }
        return cls(doc["table"], record, doc["created"], doc["expire"])


def _events(step: Any, messages: GameMessages) -> list[dict[str, Any]]:
    """The engine's events as log entries: the words, and a structured `payload`, the
    game's EventPayload message as JSON (only the fields the event's kind carries, as the
    platform's own events, created, joined, left, timeout, carry theirs)."""
    decode = messages.event_from_any
    return [
        {
            "kind": e.kind,
            "seat": e.seat,
            "text": e.text,
            "payload": decode(e.payload) if e.HasField("payload") else {},
        }
        for e in step.events
    ]


class TableService:
    def __init__(
        self,
        settings: Settings,
        store: TableStore,
        engines: EngineClients,
        tasks: TaskQueue,
        ratings: RatingBook,
    ) -> None:
        self.settings = settings
        self.store = store
        self.engines = engines
        self.tasks = tasks
        self._views: dict[tuple[str, int, int], dict[str, Any]] = {}
        self.ratings = ratings

    # -- finding and authorising ----------------------------------------------------------
    def get(self, table_id: str) -> Table:
        table = self.store.load(table_id) if TABLE_ID.match(table_id) else None
        if table is None:
            raise PlatformError(404, "unknown_table", f"no table {table_id!r}")
        return table

    @staticmethod
    def seat_of(table: Table, token: str | None, player_id: str | None = None) -> int:
        """The seat the token holds: 401 without a token, 403 with one that holds no seat here.
        A seat taken by a signed-in player is bound to that player: its token also needs
        that player's session (`player_id`), so a leaked seat token alone acts for nobody."""
        if token is None:
            raise PlatformError(
                401, "token_required", "this needs the seat's token (Authorization: Bearer ...)"
            )
        seat = table.seat_for_token(token)
        if seat is None:
            raise PlatformError(403, "wrong_token", "that token holds no seat at this table")
        owner = table.seats[seat].player_id
        if owner is not None and player_id != owner:
            if player_id is None:
                raise PlatformError(
                    401, "sign_in_required", f"seat {seat} is bound to its player: send their session too"
                )
            raise PlatformError(403, "other_player", f"seat {seat} belongs to another player")
        return seat

    # -- opening tables ----------------------------------------------------------------------
    def open_table(
        self,
        game: str,
        players: int | None,
        config: dict[str, Any],
        bots: list[str | None] | None,
        decision_seconds: float,
        seed: int | None = None,
        claims: dict[int, tuple[str, str | None, str | None]] | None = None,
        rated: bool = False,
        source: str = "lobby",
        opened_by: str | None = None,
    ) -> Table:
        """Start a game on the engine and write the table (see `plan_table`)."""
        plan = self.plan_table(
            game, players, config, bots, decision_seconds, seed, claims, rated, source, opened_by
        )
        self.write_table(plan)
        return self.get(plan.table_id)

    def plan_table(
        self,
        game: str,
        players: int | None,
        config: dict[str, Any],
        bots: list[str | None] | None,
        decision_seconds: float,
        seed: int | None = None,
        claims: dict[int, tuple[str, str | None, str | None]] | None = None,
        rated: bool = False,
        source: str = "lobby",
        opened_by: str | None = None,
    ) -> TablePlan:
        """Start a game on the engine and make the table's record, not yet written.
        `bots[i]` names seat i's bot, or None for a human seat; `claims` are human seats
        already taken (seat -> token hash, display name, player id). Matchmaking keeps the
        plan beside its tickets before writing it, so a crash in between is finished later
        (tickets.py). `opened_by` ("anonymous", "guest", "account"; None from matchmaking)
        decides which bots a table of bots only may seat (bounds.check_table_bots)."""
        desc = self.engines.describe(game)
        players = players or (len(bots) if bots else desc.default_players)
        # A variant may seat fewer than the default rules (CC-2's two_players): the range
        # here is every config's; the engine refuses a count this config does not take.
        least = desc.variant_min_players or desc.min_players
        if not least <= players <= desc.max_players:
            raise PlatformError(
                400, "invalid_players", f"{desc.title} takes {least}-{desc.max_players} players"
            )
        bots = bots if bots is not None else [None] * players
        if len(bots) != players:
            raise PlatformError(400, "malformed", f"'seats' lists {len(bots)} seats for {players} players")
        for name in bots:
            if name is not None:
                check_bot(game, name, desc.bots)
        check_table_bots(
            game, bots, opened_by, self.settings.table_bot_iterations, self.settings.table_bot_ms
        )
        claims = claims or {}
        config = self.engines.normal_config(game, config) if config else {}
        check_config(game, config, desc.config_limits)  # read back as numbers: "9e9" too
        humans = sum(1 for name in bots if name is None)
        seed, seed_source = table_seed(seed, humans)
        table_id = new_table_id()
        # Every deal nobody chose is keyed from the deal secret (docs/fairness.md): the
        # public seed alone does not tell the cards. A chosen seed is a practice deal that
        # anyone may rebuild from it (table_seed), so it stays the seeded generator.
        key = b"" if seed_source == "chosen" else deal_key(self.settings.deal_secret, table_id, seed)
        step = self.engines.new_game(game, config, players, seed, key)
        self._check_state_size(step.state, "that config")
        now = time.time()
        waiting = any(b is None and i not in claims for i, b in enumerate(bots))
        record: dict[str, Any] = {
            "game": game, "players": players, "seed": seed, "config": orjson.dumps(config).decode(),
            "rated": int(rated), "source": source, "decision_seconds": decision_seconds,
            "created": now, "status": "waiting" if waiting else "playing", "version": 0,
            "state": step.state, "to_act": orjson.dumps(list(step.to_act)).decode(),
            "turn": step.turn, "decisions": step.decisions, "seed_source": seed_source,
        }  # fmt: skip
        if key:
            record["deal_key"] = key.hex()  # server-side until the table ends (replay())
        for i, legal in enumerate(self.engines.legal_json(game, step, players)):
            record[f"legal:{i}"] = legal
        fallback = default_bot(list(desc.bots))
        for i, name in enumerate(bots):
            record[f"kind:{i}"] = "human" if name is None else "bot"
            record[f"bot:{i}"] = name or fallback
            if i in claims:
                record[f"token:{i}"], player, player_id = claims[i]
                if player:
                    record[f"player:{i}"] = player
                if player_id:
                    record[f"pid:{i}"] = player_id
        return TablePlan(
            table_id=table_id,
            record=record,
            created=now,
            expire=self.settings.waiting_ttl_seconds if waiting else None,
        )

    def write_table(self, plan: TablePlan) -> bool:
        """Write a planned table (once: False if it was already written), then let its
        bots start if a bot acts first."""
        players = int(plan.record["players"])
        entry = {
            "kind": "created", "seat": -1, "text": f"table opened for {players} players", "version": 0,
            "payload": {"game": plan.record["game"], "players": players},
        }  # fmt: skip
        created = self.store.create(plan.table_id, plan.record, entry, plan.created, plan.expire)
        if created:
            table = self.store.load(plan.table_id)
            if table is not None:
                self._after_change(table)
        return created

    # -- seats -------------------------------------------------------------------------------
    def join(
        self, table_id: str, seat: int, player: str | None, player_id: str | None = None
    ) -> tuple[Table, str]:
        """Take a seat; with `player_id` (a signed-in player) the seat is bound to them."""
        table = self.get(table_id)
        if not 0 <= seat < table.players:
            raise PlatformError(404, "unknown_seat", f"table {table_id} has seats 0-{table.players - 1}")
        if table.rated and player_id is None:
            raise PlatformError(401, "sign_in_required", "a rated table's seats are for signed-in players")
        token = secrets.token_urlsafe(32)
        outcome = self.store.claim(table, seat, hash_token(token), player, time.time(), player_id)
        if outcome in (-2, -4) and player_id is not None and table.seats[seat].player_id == player_id:
            # A join whose answer was lost, sent again: the seat is this player's already.
            raise PlatformError(
                409,
                "seat_taken",
                f"seat {seat} is yours already; POST .../seats/{seat}/token reissues its token",
            )
        if outcome == -5:
            raise PlatformError(409, "already_seated", "you hold another seat of this rated table")
        if outcome == -2:
            raise PlatformError(
                409, "not_waiting", f"table {table_id} is {table.status}; seats are taken at the start"
            )
        if outcome == -3:
            raise PlatformError(409, "bot_seat", f"seat {seat} is played by a bot")
        if outcome == -4:
            raise PlatformError(409, "seat_taken", f"seat {seat} is taken")
        if outcome < 0:
            raise PlatformError(404, "unknown_table", f"no table {table_id!r}")
        table = self.get(table_id)
        if outcome == 2:
            self._after_change(table)
        return table, token

    def reissue(self, table_id: str, seat: int, player_id: str | None) -> tuple[Table, str]:
        """A new token for a seat its signed-in player holds: a join whose answer was lost
        (or a token lost since) is recovered from the session alone; the old token stops
        working. A seat taken without a session cannot be recovered: nothing ties it to
        anyone but its token."""
        table = self.get(table_id)
        if not 0 <= seat < table.players:
            raise PlatformError(404, "unknown_seat", f"table {table_id} has seats 0-{table.players - 1}")
        if player_id is None:
            raise PlatformError(401, "sign_in_required", "a seat's token is reissued to its player's session")
        token = secrets.token_urlsafe(32)
        outcome = self.store.reissue(table_id, seat, player_id, hash_token(token))
        if outcome == -1:
            raise PlatformError(404, "unknown_table", f"no table {table_id!r}")
        if outcome == -2:
            raise PlatformError(409, "finished", "the game is over")
        if outcome == -3:
            raise PlatformError(403, "other_player", f"seat {seat} is not held by your player")
        if outcome == -4:
            raise PlatformError(409, "bot_seat", f"seat {seat} was left; its bot plays it")
        return self.get(table_id), token

    def leave(self, table_id: str, seat: int, token: str | None, player_id: str | None = None) -> Table:
        """Give up a seat. Leaving a rated game being played counts as a loss (the commit
        script marks `left:i`; RatingBook ranks such seats last)."""
        table = self.get(table_id)
        if not 0 <= seat < table.players:
            raise PlatformError(404, "unknown_seat", f"table {table_id} has seats 0-{table.players - 1}")
        if self.seat_of(table, token, player_id) != seat:
            raise PlatformError(403, "wrong_token", f"that token does not hold seat {seat}")
        if table.status == "finished":
            raise PlatformError(409, "finished", "the game is over")
        outcome = self.store.leave(table, seat, hash_token(token or ""), time.time())
        if outcome == -4:
            raise PlatformError(403, "wrong_token", f"that token does not hold seat {seat}")
        table = self.get(table_id)
        if outcome == 2:
            self._after_change(table)
        return table

    def summary(self, table: Table) -> dict[str, Any]:
        """The table as clients see it, its `config` the whole config the engine plays
        (the game's defaults with the table's overrides), not only the overrides."""
        out = table.summary()
        defaults = self.engines.description_json(table.game)["default_config"]
        out["config"] = {**defaults, **table.config}
        return out

    # -- looking -------------------------------------------------------------------------------
    def view(self, table_id: str, token: str | None, player_id: str | None = None) -> dict[str, Any]:
        """A seat's redacted view with its token, else the public view (spectators)."""
        return self.look(table_id, token, player_id)[1]

    def look(
        self, table_id: str, token: str | None, player_id: str | None = None
    ) -> tuple[Table, dict[str, Any]]:
        """The table record and the view made from that very record: whatever else a
        caller shows beside the view (the last move, the log) must come from the same
        version, or a move landing in between pairs one version's board with the next
        one's words."""
        table = self.get(table_id)
        seat = -1 if token is None else self.seat_of(table, token, player_id)
        if seat >= 0 and table.seats[seat].away and table.status == "playing":
            self.store.mark_present(table, seat, time.time())
            table = self.get(table_id)
        view = self.engines.view_json(table.game, self.engines.view(table.game, table.state, seat))
        return table, {
            "table": table.id,
            "version": table.version,
            "status": table.status,
            "deadlines": {str(s.index): s.deadline for s in table.seats if s.deadline is not None},
            **view,
        }

    def legal(self, table_id: str, token: str | None, player_id: str | None = None) -> dict[str, Any]:
        """From the list stored with the state by the move that made it (one Redis read, no
        engine call: this is asked before every move); through View for a table whose
        engine did not give it."""
        table = self.get(table_id)
        return {"table": table.id, **self._seat_now(table, self.seat_of(table, token, player_id))}

    def stream_state(self, table_id: str, seat: int | None) -> dict[str, Any] | None:
        """Everything a stream's client needs to draw the table and act, as of now: the
        view (the seat's redacted one, or the public one for a spectator's stream), and
        for a seat what `/legal` says, with the seat's deadline. Sent as a stream's first
        event and with every update, so a client never needs a `GET /view` and never
        misses a turn that began before it connected. None: the table is gone (its keys
        expired)."""
        table = self.store.load(table_id)
        if table is None:
            return None
        out: dict[str, Any] = {
            "table": table.id,
            "game": table.game,  # what the stream's events' payloads are typed by
            "version": table.version,
            "status": table.status,
            "to_act": table.to_act,
            "deadlines": {str(s.index): s.deadline for s in table.seats if s.deadline is not None},
        }
        if seat is not None:
            out.update(self._seat_now(table, seat))
            out["deadline"] = table.seats[seat].deadline
        out["view"] = self._view_of(table, -1 if seat is None else seat)
        return out

    def _view_of(self, table: Table, seat: int) -> dict[str, Any]:
        """The view's JSON at the table's version, kept per process for the last few
        (table, version, seat): every spectator stream of a table asks for the same one
        after each move, and a View is an engine call."""
        key = (table.id, table.version, seat)
        found = self._views.get(key)
        if found is None:
            found = self.engines.view_json(table.game, self.engines.view(table.game, table.state, seat))[
                "view"
            ]
            if len(self._views) >= VIEW_CACHE_SIZE:
                self._views.pop(next(iter(self._views)))
            self._views[key] = found
        return found

    def _seat_now(self, table: Table, seat: int) -> dict[str, Any]:
        """What `/legal` says for `seat` at the table's stored version."""
        return {
            "version": table.version,
            "seat": seat,
            "status": table.status,
            # An empty list alone did not say why: not your turn, not started, or over.
            "your_turn": table.status == "playing" and seat in table.to_act,
            "to_act": table.to_act,
            "legal_actions": self._seat_actions(table.game, table.state, seat, table.seats[seat].legal),
        }

    def _seat_actions(self, game: str, state: bytes, seat: int, stored: bytes | None) -> Any:
        """A seat's legal actions as clients get them: the JSON stored with the state,
        passed through unparsed (packing.py unpacks a long one); through View only where the
        engine did not give it."""
        if stored:
            return orjson.Fragment(unpack_legal(stored))
        view = self.engines.view(game, state, seat)
        return [self.engines.action_json(game, a) for a in view.legal_actions]

    def events(self, table_id: str, after: int, limit: int) -> tuple[list[dict[str, Any]], bool, str]:
        """Up to `limit` log entries after the id `after`, whether more follow, and the
        table's game (what their payloads are typed by)."""
        table = self.get(table_id)
        found = self.store.log(table_id, after + 1, limit + 1)
        page = [{"id": after + 1 + i, **e} for i, e in enumerate(found[:limit])]
        return page, len(found) > limit, table.game

    def replay(self, table_id: str) -> dict[str, Any]:
        """Exactly what `cultists replay` takes: config + seed + actions rebuild the game (G-2)."""
        table = self.get(table_id)
        if table.status != "finished":
            raise PlatformError(409, "not_finished", "the replay record is given once the game is over")
        record = {
            "game": table.game,
            "players": table.players,
            "seed": table.seed,
            "config": table.config,
            "actions": self.store.actions(table.id),
        }
        if table.deal_key:  # the deal's key, secret while the table lived (docs/fairness.md)
            record["deal_key"] = table.deal_key.hex()
        return record

    # -- moving --------------------------------------------------------------------------------
    def act(self, table: Table, seat: int, action: int, version: int) -> dict[str, Any]:
        """A human's move, chosen at `version`: applied only if the table is still there."""
        if version != table.version:
            raise self._stale(table.version)
        if table.status == "waiting":
            raise PlatformError(409, "not_started", "the game starts when every human seat is taken")
        if table.status == "finished":
            raise PlatformError(400, "illegal_action", "the game is over")
        step = self.engines.apply(table.game, table.state, seat, action)
        self._check_state_size(step.state, "that move")
        events = _events(step, self.engines.messages(table.game))
        legal = self.engines.legal_json(table.game, step, table.players)
        now = time.time()
        outcome, current, first = self.store.commit(table, seat, action, step, events, legal, now)
        if outcome != 1:
            raise self._stale(current)
        self._after_commit(table, step)
        to_act = list(step.to_act)
        return {
            "table": table.id,
            "game": table.game,  # what its events' payloads are typed by
            "version": current,
            "status": "finished" if step.terminal else "playing",
            "to_act": to_act,
            "winners": list(step.winners),
            **({"returns": list(step.returns), "scores": final_scores(step)} if step.terminal else {}),
            # As the log numbers them (GET .../events gives the same entries at these ids).
            "events": [{"id": first + i, **e, "version": current, "at": now} for i, e in enumerate(events)],
            # What `/legal` would now say for this seat, so a move is one request: the
            # engine made the list with the new position (Apply's with_legal).
            "seat": seat,
            "your_turn": not step.terminal and seat in to_act,
            "legal_actions": self._seat_actions(table.game, step.state, seat, legal[seat]),
        }

    def bot_move(self, table: Table, seat: int, timed_out: bool, dispatch: bool = True) -> bool:
        """The seat's bot decides and its move is committed like any other; False if the
        table moved on meanwhile (then nothing was written)."""
        bot = table.seats[seat].bot
        suggestion = self.engines.suggest(
            table.game, table.state, seat, bot, bot_seed(table.seed, seat, table.version)
        )
        step = self.engines.apply(table.game, table.state, seat, suggestion.id)
        self._check_state_size(step.state, f"the bot's move ({suggestion.label})")
        events = _events(step, self.engines.messages(table.game))
        if timed_out:
            text = f"seat {seat} ran out of time; its bot ({bot}) chose: {suggestion.label}"
            payload = {"bot": bot, "action": suggestion.id, "label": suggestion.label}
            events.insert(0, {"kind": "timeout", "seat": seat, "text": text, "payload": payload})
        legal = self.engines.legal_json(table.game, step, table.players)
        outcome, _, _ = self.store.commit(
            table, seat, suggestion.id, step, events, legal, time.time(), mark_away=timed_out
        )
        if outcome != 1:
            return False
        self._after_commit(table, step, dispatch=dispatch)
        return True

    def advance(self, table_id: str, budget: int = 500) -> int:
        """Play every bot seat that must decide, until a human must; the Celery task body.
        A table of bots only stops after `bot_only_slice_seconds` (at least one move) and
        queues its next stretch at background priority, so a worker goes back to the queue,
        where a human's table comes first, several times a second rather than once a game."""
        moves = 0
        started = time.monotonic()
        bots_only = False
        for attempt in range(budget):  # a lost race (someone else moved) is an attempt too
            table = self.store.load(table_id)
            if table is None or table.status != "playing":
                return moves
            bots = [s for s in table.to_act if table.seats[s].kind == "bot"]
            if not bots:
                return moves
            bots_only = is_bots_only(table)
            if bots_only and attempt and time.monotonic() - started >= self.settings.bot_only_slice_seconds:
                break
            moves += self.bot_move(table, bots[0], timed_out=False, dispatch=False)
        self.tasks.advance(table_id, bots_only)  # the rest continues in a fresh task
        return moves

    def retry_delay(self, attempt: int) -> float:
        """How long a bot move that met an unavailable engine waits before try `attempt`
        (0 first): doubling from a quarter of the retry interval up to the interval, so a
        short blip costs a quarter second and a long outage one call per interval."""
        interval = self.settings.engine_retry_seconds
        return min(interval, interval / 4 * 2 ** max(0, attempt))

    def enforce_deadlines(self, now: float) -> int:
        """Past a seat's deadline its bot acts for it, out-of-turn answers included; the
        beat task's body. Returns how many moves were made."""
        moves = 0
        for table_id in self.store.due_tables(now):
            table = self.store.load(table_id)
            if table is None or table.status != "playing":
                self.store.forget_deadline(table_id)
                continue
            due = [
                s
                for s in table.to_act
                if (deadline := table.seats[s].deadline) is not None and deadline <= now
            ]
            if not due:  # filed early (a move put the deadline off): file it at its own
                self.store.refile_early(table_id, table.due)
                continue
            seat = due[0]
            try:
                moves += self.bot_move(table, seat, timed_out=table.seats[seat].kind == "human")
            except PlatformError as exc:
                # Engine down (or refusing): try again later rather than every second.
                log.warning("deadline move at table %s seat %d failed: %s", table_id, seat, exc.message)
                # Unavailable is retried after one retry interval (never a longer stall
                # once the engine is back); a refusal will not mend itself so soon.
                wait = self.settings.engine_retry_seconds if exc.status == 503 else 60
                self.store.postpone(table_id, now + wait)
        return moves

    # -- after a change -------------------------------------------------------------------------
    def _after_change(self, table: Table) -> None:
        if table.status == "playing" and any(table.seats[s].kind == "bot" for s in table.to_act):
            self.tasks.advance(table.id, is_bots_only(table))

    def _after_commit(self, table: Table, step: Any, dispatch: bool = True) -> None:
        if step.terminal:
            if table.rated:
                self.ratings.settle(table.id)
        elif dispatch and any(table.seats[s].kind == "bot" for s in step.to_act):
            self.tasks.advance(table.id, is_bots_only(table))

    def _check_state_size(self, state: bytes, what: str) -> None:
        """400 if `state` is over the cap, checked before anything is written: at opening
        (a config dealing a huge deck) and after every apply (a game whose state grows
        move by move), so no table's stored state ever exceeds `max_state_bytes`."""
        if len(state) > self.settings.max_state_bytes:
            raise PlatformError(
                400,
                "state_too_large",
                f"{what} makes a {len(state)}-byte state; tables hold at most "
                f"{self.settings.max_state_bytes} bytes",
            )

    @staticmethod
    def _stale(current: int) -> PlatformError:
        return PlatformError(
            409,
            "stale_version",
            f"the table is at version {current}; fetch the view and choose again",
            version=current,
        )
