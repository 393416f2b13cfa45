"""The gRPC adapter and server bootstrap every engine shares.

The servicer holds no rules and no state (architecture decisions 1 and 2): it decodes the
state bytes, calls the rules library, and encodes the result. It keeps the states it
issued lately (issued.py), but only as a shortcut past decoding the same bytes again: an
answer never depends on it, and any replica can serve any call. Everything a production gRPC
service is expected to have is here once: the standard health service (which says
NOT_SERVING while draining, unlike a health check that always says yes), server reflection,
Prometheus metrics on their own port, and graceful shutdown on SIGTERM.

The engine keeps its own bounds (issue 27): a bot whose budget is above the engine's
ceiling is refused (budget.py, INVALID_ARGUMENT naming the ceiling), a search stops as soon
as its caller's deadline passes or the caller hangs up, and a drain that outlasts its grace
period stops the searches still running, so SIGTERM ends the process within the grace.
"""

from __future__ import annotations

import errno
import functools
import gc
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Hashable
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
import orjson
from cultists.v1 import common_pb2, engine_pb2, engine_pb2_grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import start_http_server

from ..registry import load_game
from .bots import bot_names, make_bot
from .budget import BotBudget
from .config import check_limits, config_limits, config_to_dict
from .deal_rng import KEY_BYTES as DEAL_KEY_BYTES
from .errors import BadConfig, BadState, IllegalAction, SearchStopped
from .game import GameSpec, State
from .issued import IssuedStates
from .messages import GameMessages, load_messages
from .metrics import ACTIONS_APPLIED, GAMES_FINISHED, GAMES_STARTED, RPC_ERRORS, RPC_SECONDS, SERVING
from .serial import state_from_bytes, state_to_bytes

log = logging.getLogger("cultists.engine")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["GameEngine"].full_name
_ACTION_CACHE_SIZE = 65536  # distinct actions kept built (see EngineServicer._cached_action)
_TEXT_CONFIGS = 64  # configs whose actions are kept by text key (EngineServicer._texts_of)
GRACE_ENV = "ENGINE_GRACE_SECONDS"  # how long a drain lets in-flight calls finish
DEFAULT_GRACE = 5.0


def _rpc(method: Callable[..., Any]) -> Callable[..., Any]:
    """Time the call, and turn the library's errors into the contract's status codes."""
    name = method.__name__
    histogram_by_game: dict[str, Any] = {}

    @functools.wraps(method)
    def wrapper(self: EngineServicer, request: Any, context: grpc.ServicerContext) -> Any:
        timer = histogram_by_game.get(self.spec.name)
        if timer is None:
            timer = histogram_by_game[self.spec.name] = RPC_SECONDS.labels(self.spec.name, name)
        start = time.perf_counter()
        code: grpc.StatusCode | None = None
        try:
            return method(self, request, context)
        except (BadState, BadConfig) as exc:
            code, detail = grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        except IllegalAction as exc:
            code, detail = grpc.StatusCode.FAILED_PRECONDITION, str(exc)
        except SearchStopped as exc:  # the caller is gone or out of time: say which
            code = grpc.StatusCode.CANCELLED if self.halted() else grpc.StatusCode.DEADLINE_EXCEEDED
            detail = str(exc)
        except Exception:
            log.exception("%s.%s failed", self.spec.name, name)
            code, detail = grpc.StatusCode.INTERNAL, f"internal error in {name}"
        finally:
            timer.observe(time.perf_counter() - start)
            if code is not None:
                RPC_ERRORS.labels(self.spec.name, name, code.name).inc()
        context.abort(code, detail)

    return wrapper


def _scores(state: State) -> list[common_pb2.SeatScore]:
    """The final scores of a terminal state, in the contract's message."""
    return [
        common_pb2.SeatScore(
            seat=seat,
            total=total,
            parts=[common_pb2.ScorePart(name=name, value=value) for name, value in parts.items()],
        )
        for seat, (total, parts) in enumerate(state.score_breakdown())
    ]


class EngineServicer(engine_pb2_grpc.GameEngineServicer):
    """GameEngine for one game."""

    def __init__(self, spec: GameSpec, messages: GameMessages, budget: BotBudget | None = None) -> None:
        self.spec = spec
        self.messages = messages
        self.budget = budget or BotBudget.from_env()
        self._halt = threading.Event()  # set once a drain's grace is over (RunningEngine.stop)
        # Labelled once: a labels() lookup per call is a visible share of an Apply.
        self._applied = ACTIONS_APPLIED.labels(spec.name)
        self._finished = GAMES_FINISHED.labels(spec.name)
        self._actions: dict[tuple[int, str, bytes], tuple[common_pb2.Action, bytes]] = {}
        self._texts: dict[int, tuple[Any, dict[Hashable, bytes]]] = {}
        self._issued = IssuedStates()

    # -- helpers -------------------------------------------------------------------------
    def halt(self) -> None:
        """Stop every search still running, now and from here on (the drain is over)."""
        self._halt.set()

    def halted(self) -> bool:
        return self._halt.is_set()

    def _stopper(self, context: grpc.ServicerContext) -> Callable[[], bool]:
        """A search's stop hook for one call: the engine halted, the caller hung up (or the
        server cancelled the call), or the caller's deadline has passed."""
        halt = self._halt
        is_active = context.is_active
        time_remaining = context.time_remaining

        def stop() -> bool:
            if halt.is_set() or not is_active():
                return True
            remaining = time_remaining()
            return remaining is not None and remaining <= 0

        return stop

    def _load(self, data: bytes) -> State:
        """The state the bytes hold, a copy of the kept one where there is one (issued.py)."""
        state = self._issued.recall(data)
        if state is None:
            state = state_from_bytes(data, expected_game=self.spec.name)
        state.log = []
        return state

    def _load_to_change(self, data: bytes) -> tuple[State, dict[int, list[int]]]:
        """For a caller that will change the state (Apply): the kept object itself with the
        legal actions its answer carried (seat -> ids), else the state read from the bytes
        and no lists."""
        taken = self._issued.take(data)
        state, legal = taken if taken is not None else (state_from_bytes(data, self.spec.name), {})
        state.log = []
        return state, legal

    def _step(self, state: State, with_legal: bool = False) -> common_pb2.Step:
        terminal = state.is_terminal()
        to_act = state.to_act()
        data = state_to_bytes(state)
        # Only what is set goes to the constructor, and events are added in place: empty
        # lists and a Python-built Event copied in cost half of building the message.
        step = common_pb2.Step(state=data, to_act=to_act, turn=state.turn, decisions=state.decisions)
        add_event = step.events.add
        event_to_any = self.messages.event_to_any
        for e in state.log or ():
            if e.payload:
                add_event(kind=e.kind, seat=e.seat, text=e.text, payload=event_to_any(e.payload))
            else:
                add_event(kind=e.kind, seat=e.seat, text=e.text)
        if terminal:
            step.terminal = True
            step.returns.extend(state.returns())
            step.winners.extend(state.winners())
            step.scores.extend(_scores(state))
        legal: dict[int, list[int]] = {}
        if with_legal:
            texts = self._texts_of(state.config)
            for seat in to_act:
                ids = legal[seat] = state.legal_actions(seat)
                # Each cached entry is a whole SeatActions holding that one action, and
                # repeated fields concatenate: parsing the joined bytes in C builds the
                # seat's list without a Python-level message per action.
                step.legal.add(seat=seat).MergeFromString(
                    b"".join([self._action_bytes(state, a, texts) for a in ids])
                )
        self._issued.remember(data, state, legal)  # last: from here on, any call may take it
        return step

    def _action(self, state: State, action: int) -> common_pb2.Action:
        """A message of its own (the cached one is shared, so never handed out)."""
        answer = common_pb2.Action()
        answer.CopyFrom(self._cached_action(state, action)[0])
        return answer

    def _texts_of(self, config: Any) -> dict[Hashable, bytes]:
        """The actions built for one config, by their `State.action_text_key`. Keyed by the
        config object, which is kept in the entry, so a reused id never finds another's."""
        found = self._texts.get(id(config))
        if found is None or found[0] is not config:
            if len(self._texts) >= _TEXT_CONFIGS:
                self._texts.clear()  # a bound: configs are few, and shared (game._cached_config)
            found = self._texts[id(config)] = (config, {})
        return found[1]

    def _action_bytes(self, state: State, action: int, texts: dict[Hashable, bytes]) -> bytes:
        """An action as a one-action SeatActions: built once per config and text key
        where the game says its words do not read the position, else as `_cached_action`."""
        key = state.action_text_key(action)
        if key is None:
            return self._cached_action(state, action)[1]
        found = texts.get(key)
        if found is None:
            found = texts[key] = self._cached_action(state, action)[1]
        return found

    def _cached_action(self, state: State, action: int) -> tuple[common_pb2.Action, bytes]:
        """An action's message, and the same as a SeatActions holding only it, cached by
        its id, label and detail: a game meets a few hundred distinct ones again and again,
        and building the message with its packed detail was most of what the legal lists
        of an Apply cost. The detail's JSON is the key, so `1` and `true`, or a list and
        a dict, never share an entry."""
        label = state.action_label(action)
        detail = state.action_detail(action)
        try:
            key = (action, label, orjson.dumps(detail))
        except orjson.JSONEncodeError:  # not JSON-shaped: the message builder says what is wrong
            return self._build_action(action, label, detail)
        found = self._actions.get(key)
        if found is None:
            if len(self._actions) >= _ACTION_CACHE_SIZE:
                self._actions.clear()  # a bound, never reached by the games as they are
            found = self._actions[key] = self._build_action(action, label, detail)
        return found

    def _build_action(
        self, action: int, label: str, detail: dict[str, Any]
    ) -> tuple[common_pb2.Action, bytes]:
        message = common_pb2.Action(id=action, label=label, detail=self.messages.action_to_any(detail))
        return message, common_pb2.SeatActions(actions=[message]).SerializeToString()

    def _seat(self, state: State, seat: int) -> None:
        if not 0 <= seat < state.num_players:
            raise IllegalAction(f"seat {seat} is not at this {state.num_players}-player table")

    # -- RPCs ----------------------------------------------------------------------------
    @_rpc
    def Describe(self, request: Any, context: Any) -> engine_pb2.GameDescription:
        spec = self.spec
        return engine_pb2.GameDescription(
            game=spec.name,
            title=spec.title,
            min_players=spec.min_players_for(spec.make_config()),
            variant_min_players=spec.min_players,
            max_players=spec.max_players,
            default_players=spec.default_players,
            default_config=self.messages.config_to_any(config_to_dict(spec.make_config())),
            variants=spec.variants,
            bots=bot_names(spec),
            summary=spec.summary,
            config_choices=[
                engine_pb2.ConfigChoice(field=name, values=values)
                for name, values in spec.config_choices.items()
            ],
            config_limits=[
                engine_pb2.ConfigLimit(field=name, minimum=low, maximum=high)
                for name, (low, high) in config_limits(spec.config_class).items()
            ],
        )

    @_rpc
    def NewGame(self, request: engine_pb2.NewGameRequest, context: Any) -> common_pb2.Step:
        overrides = self.messages.config_from_any(request.config)
        check_limits(self.spec.config_class, overrides)  # the bounds Describe publishes
        config = self.spec.make_config(overrides)
        key = request.deal_key or None
        if key is not None and len(key) != DEAL_KEY_BYTES:
            raise BadConfig(f"deal_key must be {DEAL_KEY_BYTES} bytes, or empty for a seeded deal")
        state = self.spec.new_state(config, request.players or None, request.seed, key)
        state.log = []
        GAMES_STARTED.labels(self.spec.name).inc()
        return self._step(state, request.with_legal)

    @_rpc
    def Apply(self, request: engine_pb2.ApplyRequest, context: Any) -> common_pb2.Step:
        state, legal = self._load_to_change(request.state)
        self._seat(state, request.seat)
        state.apply(request.seat, request.action, legal.get(request.seat))
        self._applied.inc()
        step = self._step(state, request.with_legal)
        if step.terminal:  # asked once, in _step: the rules' own check is not free
            self._finished.inc()
        return step

    @_rpc
    def View(self, request: engine_pb2.ViewRequest, context: Any) -> common_pb2.PlayerView:
        state = self._load(request.state)
        seat = None if request.seat < 0 else request.seat
        if seat is not None:
            self._seat(state, seat)
        to_act = state.to_act()
        legal = state.legal_actions(seat) if seat is not None and seat in to_act else []
        terminal = state.is_terminal()
        return common_pb2.PlayerView(
            seat=request.seat,
            view=self.messages.view_to_any(state.view(seat)),
            legal_actions=[self._action(state, a) for a in legal],
            to_act=to_act,
            terminal=terminal,
            winners=state.winners() if terminal else (),
            turn=state.turn,
            decisions=state.decisions,
        )

    @_rpc
    def SuggestAction(self, request: engine_pb2.BotRequest, context: Any) -> common_pb2.Action:
        state = self._load(request.state)
        self._seat(state, request.seat)
        if request.seat not in state.to_act():
            raise IllegalAction(f"seat {request.seat} is not asked to decide now")
        text = request.bot or "random"
        bot = make_bot(self.spec, text, request.seed)
        self.budget.check(bot, text)  # this engine's own ceiling, whatever the gateway allowed
        if hasattr(bot, "stop"):
            bot.stop = self._stopper(context)
        legal = state.legal_actions(request.seat)
        return self._action(state, bot.choose(state, request.seat, legal))

    @_rpc
    def Ping(self, request: Any, context: Any) -> engine_pb2.PingReply:
        return engine_pb2.PingReply()


@dataclass
class RunningEngine:
    """A started engine: its ports, and how to drain and stop it."""

    game: str
    port: int
    metrics_port: int | None
    server: grpc.Server
    health: health.HealthServicer
    metrics_server: Any = None
    servicer: EngineServicer | None = None

    def stop(self, grace: float = DEFAULT_GRACE) -> None:
        """Say NOT_SERVING first so balancers drain us, then let in-flight calls finish
        for up to `grace` seconds; a search still running then is stopped (gRPC cancels its
        call, but a Python thread runs on until the search itself looks), so the process
        can exit at once instead of waiting for it."""
        self.health.enter_graceful_shutdown()
        SERVING.labels(self.game).set(0)
        self.server.stop(grace).wait()
        if self.servicer is not None:
            self.servicer.halt()
        if self.metrics_server is not None:
            self.metrics_server.shutdown()
            self.metrics_server.server_close()


# How long one client connection lives (then GOAWAY, and the client reconnects).
MAX_CONNECTION_AGE_MS = 60_000


def start_engine(
    game: str,
    port: int = 0,
    host: str = "127.0.0.1",
    metrics_port: int | None = None,
    max_workers: int = 8,
    reuse_port: bool = False,
    budget: BotBudget | None = None,
) -> RunningEngine:
    """Start serving `game` on `host` (an IPv4 or IPv6 address, bracketed or not, or a name;
    `0.0.0.0` or `[::]` for every interface); port 0 picks a free port (tests). Returns at once.

    Binding one address lets replicas share a port number on different addresses of one
    host (127.0.0.1:P and [::1]:P are the two records of `localhost` on most machines).

    gRPC sets SO_REUSEPORT by default, which lets a second server bind a port another
    already listens on and silently share its connections; here it is off unless asked
    for (`reuse_port`), so a port in use is refused (OSError). `budget`: the bot ceilings
    (default: ENGINE_MAX_BOT_ITERATIONS / ENGINE_MAX_BOT_MS, budget.py)."""
    spec = load_game(game)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers),
        options=[
            ("grpc.so_reuseport", 1 if reuse_port else 0),
            # Clients connect again now and then, resolving the engine's name anew: pods
            # the autoscaler adds get calls within a minute (a client's round_robin only
            # knows the replicas its last resolution named). Calls in flight finish first.
            ("grpc.max_connection_age_ms", MAX_CONNECTION_AGE_MS),
            ("grpc.max_connection_age_grace_ms", MAX_CONNECTION_AGE_MS),
        ],
    )
    servicer = EngineServicer(spec, load_messages(game), budget)
    engine_pb2_grpc.add_GameEngineServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    host = host.strip("[]")
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"  # gRPC brackets IPv6
    try:
        bound = server.add_insecure_port(address)
    except RuntimeError:  # what grpcio raises for an address it cannot bind
        bound = 0
    if bound == 0:
        raise OSError(errno.EADDRINUSE, f"could not bind {address}")
    metrics_server = None
    actual_metrics = None
    if metrics_port is not None:
        metrics_server, _thread = start_http_server(metrics_port, addr=host)
        actual_metrics = metrics_server.server_port
    server.start()
    for name in ("", SERVICE_NAME):
        health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    SERVING.labels(game).set(1)
    return RunningEngine(game, bound, actual_metrics, server, health_servicer, metrics_server, servicer)


def serve_forever(
    game: str, port: int, host: str, metrics_port: int | None, reuse_port: bool = False
) -> None:
    """Run until SIGTERM or SIGINT, then drain gracefully (what `cultists serve` does).

    The signal is taken through Python's wakeup fd: whichever thread the kernel hands it
    to, the C-level handler writes its number to the pipe at once, and the main thread,
    blocked reading that pipe, wakes. Two simpler ways lose signals here. A Python-level
    handler runs only when the main thread checks for signals, which this module, compiled
    by Cython, need never do between two sleeps (a SIGTERM was lost and the engine never
    drained, seen in the grpc bench). Blocking the signals and taking them with `sigwait`
    misses one the kernel gives a thread started before the block: numpy's BLAS starts
    such a thread at import, and a Ctrl-C delivered to it never reached `sigwait`."""
    stop_signals = (signal.SIGTERM, signal.SIGINT)
    grace = _grace_seconds()  # a bad setting is refused before anything starts
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    for stop_signal in stop_signals:
        signal.signal(stop_signal, lambda _number, _frame: None)  # the wakeup fd does the work
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    engine = start_engine(game, port=port, host=host, metrics_port=metrics_port, reuse_port=reuse_port)
    # What is loaded now (gRPC, protobuf, the rules) lives as long as the process: keep it
    # out of the garbage collector's full passes, which otherwise walk it again and again.
    gc.freeze()
    log.info(
        "%s engine serving on %s:%d (metrics on %s)", game, host, engine.port, engine.metrics_port or "-"
    )
    while not set(os.read(wake_read, 16)) & set(stop_signals):
        pass  # another signal's wakeup (none is handled here): keep serving
    log.info("%s engine draining (grace %gs)", game, grace)
    engine.stop(grace)
    log.info("%s engine stopped", game)


def _grace_seconds() -> float:
    """ENGINE_GRACE_SECONDS, kept below the orchestrator's own (deploy/k8s: 30 s); a bad
    value is BadConfig, which `cultists` reports as bad input (exit 2)."""
    raw = os.environ.get(GRACE_ENV, "").strip()
    try:
        value = float(raw) if raw else DEFAULT_GRACE
    except ValueError:
        raise BadConfig(f"{GRACE_ENV} must be a number of seconds, got {raw!r}") from None
    if not value >= 0:
        raise BadConfig(f"{GRACE_ENV} must not be negative, got {raw!r}")
    return value
