"""gRPC clients of the game engines, found by game name, with the contract's errors mapped
to HTTP once.

The gateway knows nothing about any game's rules: it forwards state bytes, seats and action
ids, and decodes the `Any` payloads into JSON with the game's own message types. One channel
per game is shared by every thread of the process (gRPC channels are thread-safe and
multiplex calls); it balances over every replica of the engine and retries a call once on
UNAVAILABLE (engine_channels.py). Every call is timed into the engine-call metrics.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import grpc
import orjson
from cultists.v1 import common_pb2, engine_pb2, engine_pb2_grpc
from google.protobuf import json_format

from services.engines.core.messages import GameMessages, load_messages, message_to_dict
from services.engines.registry import available_games

from .engine_channels import open_channel
from .errors import PlatformError
from .metrics import ENGINE_CALL_SECONDS, ENGINE_ERRORS
from .settings import Settings

# Engine status -> (HTTP status, error code). An engine that is down, too slow, or stopped
# mid-call (CANCELLED: a restart cut the call off) is the gateway's 503 with Retry-After;
# what the engine refuses is the client's 400.
_STATUS = {
    grpc.StatusCode.FAILED_PRECONDITION: (400, "illegal_action"),
    grpc.StatusCode.INVALID_ARGUMENT: (400, "invalid_argument"),
    grpc.StatusCode.UNAVAILABLE: (503, "engine_unavailable"),
    grpc.StatusCode.DEADLINE_EXCEEDED: (503, "engine_unavailable"),
    grpc.StatusCode.CANCELLED: (503, "engine_unavailable"),
}


# How long a call that found no engine replica ready waits for one before its 503: about
# the channel's longest reconnect backoff (engine_channels.py), so an engine that is back
# by then is found.
RECONNECT_SECONDS = 1.5

# Distinct action details kept as JSON (see action_json).
_DETAIL_CACHE_SIZE = 65536


class EngineClients:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.games = list(settings.games if settings.games is not None else available_games())
        self._lock = threading.Lock()
        self._stubs: dict[str, engine_pb2_grpc.GameEngineStub] = {}
        self._channels: dict[str, grpc.Channel] = {}
        self._descriptions: dict[str, engine_pb2.GameDescription] = {}
        self._details: dict[tuple[str, str, bytes], tuple[dict[str, Any], dict[str, Any]]] = {}

    def messages(self, game: str) -> GameMessages:
        self.require(game)
        return load_messages(game)

    def require(self, game: str) -> None:
        if game not in self.games:
            raise PlatformError(404, "unknown_game", f"no game {game!r}; known: {', '.join(self.games)}")

    def _stub(self, game: str) -> engine_pb2_grpc.GameEngineStub:
        stub = self._stubs.get(game)
        if stub is None:
            with self._lock:
                stub = self._stubs.get(game)
                if stub is None:
                    address = self.settings.engine_address(game)
                    try:
                        channel = open_channel(address)
                    except (ValueError, OSError) as exc:  # not host:port, or no such name
                        raise PlatformError(
                            503, "engine_unavailable", f"the {game} engine address {address!r}: {exc}"
                        ) from None
                    self._channels[game] = channel
                    stub = self._stubs[game] = engine_pb2_grpc.GameEngineStub(channel)
        return stub

    def _call(self, game: str, method: str, request: Any) -> Any:
        stub = self._stubs.get(game)
        if stub is None:
            self.require(game)
            stub = self._stub(game)
        start = time.perf_counter()
        try:
            try:
                return getattr(stub, method)(request, timeout=self.settings.engine_timeout)
            except grpc.RpcError as first:
                # No replica was ready (the only one restarting, or every one just lost):
                # wait briefly for one to be, then once more. The channel's own retry
                # already went to another ready replica, if there was one.
                if first.code() is not grpc.StatusCode.UNAVAILABLE or not self._ready(game):
                    raise
                return getattr(stub, method)(request, timeout=self.settings.engine_timeout)
        except grpc.RpcError as exc:
            code = exc.code()
            ENGINE_ERRORS.labels(game, method, code.name).inc()
            status, name = _STATUS.get(code, (502, "engine_error"))
            if status == 503:
                raise PlatformError(503, name, f"the {game} engine is not answering ({code.name})") from None
            raise PlatformError(status, name, exc.details() or code.name) from None
        finally:
            ENGINE_CALL_SECONDS.labels(game, method).observe(time.perf_counter() - start)

    def _ready(self, game: str) -> bool:
        """Whether some replica of `game`'s engine is connected within RECONNECT_SECONDS."""
        try:
            grpc.channel_ready_future(self._channels[game]).result(timeout=RECONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            return False
        return True

    # -- the contract ----------------------------------------------------------------------
    def describe(self, game: str) -> engine_pb2.GameDescription:
        """Cached after the first answer: a game's facts do not change while it is served."""
        found = self._descriptions.get(game)
        if found is None:
            found = self._descriptions[game] = self._call(game, "Describe", engine_pb2.DescribeRequest())
        return found

    def new_game(
        self, game: str, config: dict[str, Any], players: int, seed: int, deal_key: bytes = b""
    ) -> common_pb2.Step:
        """A new game's first Step; a `deal_key` deals it from ChaCha20 (platform/deal.py)."""
        request = engine_pb2.NewGameRequest(players=players, seed=seed, with_legal=True, deal_key=deal_key)
        if config:
            request.config.CopyFrom(self.config_any(game, config))
        return self._call(game, "NewGame", request)

    def apply(self, game: str, state: bytes, seat: int, action: int) -> common_pb2.Step:
        return self._call(
            game, "Apply", engine_pb2.ApplyRequest(state=state, seat=seat, action=action, with_legal=True)
        )

    def view(self, game: str, state: bytes, seat: int) -> common_pb2.PlayerView:
        return self._call(game, "View", engine_pb2.ViewRequest(state=state, seat=seat))

    def suggest(self, game: str, state: bytes, seat: int, bot: str, seed: int) -> common_pb2.Action:
        return self._call(
            game, "SuggestAction", engine_pb2.BotRequest(state=state, seat=seat, bot=bot, seed=seed)
        )

    # -- JSON forms --------------------------------------------------------------------------
    def config_any(self, game: str, config: dict[str, Any]) -> Any:
        """Config overrides in the game's message; a field it lacks or a wrong type is 400."""
        try:
            return self.messages(game).config_to_any(config)
        except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
            raise PlatformError(400, "invalid_config", f"config for {game}: {exc}") from None

    def normal_config(self, game: str, config: dict[str, Any]) -> dict[str, Any]:
        """The overrides as the engine reads them back (what the replay record keeps)."""
        return self.messages(game).config_from_any(self.config_any(game, config))

    def description_json(self, game: str) -> dict[str, Any]:
        desc = self.describe(game)
        messages = self.messages(game)
        defaults = messages.config()
        desc.default_config.Unpack(defaults)
        return {
            "game": desc.game,
            "title": desc.title,
            "summary": desc.summary,
            "min_players": desc.min_players,
            "variant_min_players": desc.variant_min_players or desc.min_players,
            "max_players": desc.max_players,
            "default_players": desc.default_players,
            "variants": list(desc.variants),
            "bots": list(desc.bots),
            "default_config": message_to_dict(defaults),
            "config_choices": {c.field: list(c.values) for c in desc.config_choices},
            "config_limits": {
                c.field: {"minimum": c.minimum, "maximum": c.maximum} for c in desc.config_limits
            },
        }

    def view_json(self, game: str, view: common_pb2.PlayerView) -> dict[str, Any]:
        messages = self.messages(game)
        body = messages.view()
        view.view.Unpack(body)
        return {
            "seat": view.seat,
            "view": message_to_dict(body),
            "legal_actions": [self.action_json(game, a) for a in view.legal_actions],
            "to_act": list(view.to_act),
            "terminal": view.terminal,
            "winners": list(view.winners),
            "turn": view.turn,
            "decisions": view.decisions,
        }

    def legal_json(self, game: str, step: common_pb2.Step, players: int) -> list[bytes]:
        """Each seat's legal actions at this step as the JSON array `/legal` sends, kept
        with the state so that asking costs no engine call. b"" where the step does not
        say (an engine that predates Step.legal): that seat is asked through View."""
        if len(step.legal) != len(step.to_act):
            return [b""] * players
        out = [b"[]"] * players
        for entry in step.legal:
            out[entry.seat] = orjson.dumps([self.action_json(game, a) for a in entry.actions])
        return out

    def action_json(self, game: str, action: common_pb2.Action) -> dict[str, Any]:
        """An action as clients see it: id, label, the game's detail, and the shared
        vocabulary's `kind`, `card` and `target` (GameMessages.vocabulary). The detail's
        JSON is cached by the detail's bytes (a game's ActionDetail is a handful of
        distinct messages, met again on every table), so its dicts are shared between
        answers: callers must not change them."""
        packed = action.detail
        key = (game, packed.type_url, packed.value)
        detail = self._details.get(key)
        if detail is None:
            message = self.messages(game).action()
            if packed.type_url:
                packed.Unpack(message)
            as_dict = message_to_dict(message)
            # The game's own detail, and beside it the words every game shares (kind,
            # card as {id, name, ...}, target), so a client renders any game's move alike.
            detail = (as_dict, self.messages(game).vocabulary(as_dict))
            if len(self._details) >= _DETAIL_CACHE_SIZE:
                self._details.clear()  # a bound, never reached by the games as they are
            self._details[key] = detail
        return {"id": action.id, "label": action.label, "detail": detail[0], **detail[1]}

    # -- health --------------------------------------------------------------------------------
    def healthy(self, game: str, timeout: float = 2.0) -> bool:
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        self._stub(game)
        try:
            reply = health_pb2_grpc.HealthStub(self._channels[game]).Check(  # type: ignore[attr-defined]  # typeshed's HealthStub omits Check
                health_pb2.HealthCheckRequest(service="cultists.v1.GameEngine"), timeout=timeout
            )
        except grpc.RpcError:
            return False
        return reply.status == health_pb2.HealthCheckResponse.SERVING

    def close(self) -> None:
        with self._lock:
            for channel in self._channels.values():
                channel.close()
            self._channels.clear()
            self._stubs.clear()
