"""The GameEngine contract, checked against every installed game's real gRPC server.

No mocks: each engine is served on a free loopback port and called through generated stubs.
"""

from __future__ import annotations

import random
import urllib.request

import grpc
import orjson
import pytest
from cultists.v1 import engine_pb2, engine_pb2_grpc
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from services.engines.core.messages import load_messages, message_to_dict
from services.engines.core.serial import json_from_bytes, state_from_bytes
from services.engines.core.server import EngineServicer
from services.engines.registry import available_games, load_game

GAMES = available_games()


@pytest.fixture(params=GAMES)
def game(request, engines):
    engine = engines[request.param]
    channel = grpc.insecure_channel(f"127.0.0.1:{engine.port}")
    yield request.param, engine, channel, engine_pb2_grpc.GameEngineStub(channel)
    channel.close()


def test_health_reports_serving(game):
    _, _, channel, _ = game
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "cultists.v1.GameEngine"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_service(game):
    _, _, channel, _ = game
    db = ProtoReflectionDescriptorDatabase(channel)
    assert "cultists.v1.GameEngine" in db.get_services()
    pool = descriptor_pool.DescriptorPool(db)
    service = pool.FindServiceByName("cultists.v1.GameEngine")
    assert {m.name for m in service.methods} >= {"Describe", "NewGame", "Apply", "View", "SuggestAction"}


def test_describe_gives_defaults_that_start_a_game(game):
    name, _, _, stub = game
    desc = stub.Describe(engine_pb2.DescribeRequest(), timeout=5)
    assert desc.game == name and desc.min_players <= desc.default_players <= desc.max_players
    assert "random" in desc.bots
    step = stub.NewGame(engine_pb2.NewGameRequest(config=desc.default_config, seed=3), timeout=5)
    assert step.to_act and not step.terminal


def test_config_choices_are_the_names_the_config_takes(game):
    """Each name Describe offers for a field starts a game; a name it does not offer is
    refused. A list field takes the names one per seat (Trash Cult) or as a set (Tricky)."""
    name, _, _, stub = game
    desc = stub.Describe(engine_pb2.DescribeRequest(), timeout=5)
    assert desc.config_choices, f"{name} names no choices"
    messages = load_messages(name)
    defaults = messages.config()
    desc.default_config.Unpack(defaults)
    for choice in desc.config_choices:
        values = list(choice.values)
        assert values and len(set(values)) == len(values)
        takes_list = isinstance(message_to_dict(defaults).get(choice.field, []), list)
        candidates = [values[: desc.default_players]] if takes_list else [[v] for v in values]
        for picked in candidates:
            value = picked if takes_list else picked[0]
            config = messages.config_to_any({choice.field: value})
            step = stub.NewGame(engine_pb2.NewGameRequest(config=config, seed=1), timeout=5)
            assert step.to_act
        wrong = ["no-such-name"] * (desc.default_players if takes_list else 1)
        config = messages.config_to_any({choice.field: wrong if takes_list else wrong[0]})
        with pytest.raises(grpc.RpcError) as err:
            stub.NewGame(engine_pb2.NewGameRequest(config=config, seed=1), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_whole_game_plays_over_grpc(game):
    name, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=11), timeout=5)
    messages = load_messages(name)
    pick = random.Random(11)
    calls = 0
    while not step.terminal:
        seat = step.to_act[0]
        view = stub.View(engine_pb2.ViewRequest(state=step.state, seat=seat), timeout=5)
        assert view.legal_actions, "a seat asked to act has legal actions"
        assert view.view.Is(messages.view.DESCRIPTOR)
        if calls % 5 == 0:
            suggestion = stub.SuggestAction(
                engine_pb2.BotRequest(state=step.state, seat=seat, bot="random", seed=calls), timeout=5
            )
            action = suggestion.id
            assert action in {a.id for a in view.legal_actions}
        else:
            action = pick.choice(view.legal_actions).id
        step = stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action), timeout=5)
        calls += 1
        assert calls < 20_000, "game did not end"
    assert len(step.returns) >= 2
    assert sum(step.returns) == pytest.approx(1.0 if name != "tricky_cultists" else 2.0)
    # The final scores: one per seat, each with named parts; a winner's score (its team's
    # in Tricky Cultists, TK-11) is the best.
    assert [s.seat for s in step.scores] == list(range(len(step.returns)))
    assert all(s.parts for s in step.scores)

    def deciding(score) -> float:
        parts = {p.name: p.value for p in score.parts}
        return parts.get("team_total", score.total)

    for winner in step.winners:
        assert deciding(step.scores[winner]) == max(deciding(s) for s in step.scores)
    public = stub.View(engine_pb2.ViewRequest(state=step.state, seat=-1), timeout=5)
    assert public.terminal and list(public.winners) == list(step.winners)
    assert not public.legal_actions


def test_step_legal_is_what_view_gives_every_seat_to_act(game):
    """with_legal hands back, for each seat to act, exactly View's legal actions (ids, labels
    and details), so a caller may keep them instead of asking View; without it, none."""
    _, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=5, with_legal=True), timeout=5)
    pick = random.Random(5)
    calls = 0
    while True:
        assert [entry.seat for entry in step.legal] == list(step.to_act)
        for entry in step.legal:
            view = stub.View(engine_pb2.ViewRequest(state=step.state, seat=entry.seat), timeout=5)
            assert list(entry.actions) == list(view.legal_actions)
        if step.terminal:
            break
        seat = step.to_act[0]
        action = pick.choice(step.legal[0].actions).id
        plain = stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action), timeout=5)
        assert not plain.legal
        step = stub.Apply(
            engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True), timeout=5
        )
        assert step.state == plain.state
        calls += 1
        assert calls < 20_000, "game did not end"
    assert not step.legal


def test_moves_are_answered_while_a_bot_thinks(game):
    """A bot given seconds to think must not hold up the table next door: Apply and View
    are answered while its SuggestAction is still running."""
    _, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=21, with_legal=True), timeout=5)
    seat = step.to_act[0]
    thinking = stub.SuggestAction.future(
        engine_pb2.BotRequest(state=step.state, seat=seat, bot="ismcts:ms=2000", seed=1), timeout=30
    )
    try:
        for _ in range(5):
            stub.View(engine_pb2.ViewRequest(state=step.state, seat=seat), timeout=10)
            stub.Apply(
                engine_pb2.ApplyRequest(state=step.state, seat=seat, action=step.legal[0].actions[0].id),
                timeout=10,
            )
        assert not thinking.done(), "the moves waited for the bot"
    finally:
        suggestion = thinking.result()
    assert suggestion.id in {a.id for a in step.legal[0].actions}


def test_unreadable_state_is_invalid_argument_and_server_keeps_serving(game):
    name, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=5), timeout=5)
    doc = json_from_bytes(step.state)
    doc["rng"] = "not a number"
    bad_inputs = [b"\x00garbage", b"[]", orjson.dumps({"game": name}), orjson.dumps(doc)]
    for bad in bad_inputs:
        with pytest.raises(grpc.RpcError) as err:
            stub.Apply(engine_pb2.ApplyRequest(state=bad, seat=0, action=0), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.View(engine_pb2.ViewRequest(state=b"{}", seat=0), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stub.Ping(engine_pb2.PingRequest(), timeout=5)
    assert stub.Describe(engine_pb2.DescribeRequest(), timeout=5).game == name


def test_tampered_cards_are_refused(game):
    """A state that duplicates a card fails validation rather than playing on."""
    _, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=5), timeout=5)
    doc = json_from_bytes(step.state)
    zones = [k for k, v in doc.items() if isinstance(v, list) and v and isinstance(v[0], int)]
    assert zones, "state has a card zone"
    doc[zones[0]] = doc[zones[0]] + doc[zones[0]][:1]
    with pytest.raises(grpc.RpcError) as err:
        stub.View(engine_pb2.ViewRequest(state=orjson.dumps(doc), seat=0), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_illegal_action_is_failed_precondition_with_reason(game):
    _name, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=9), timeout=5)
    seat = step.to_act[0]
    view = stub.View(engine_pb2.ViewRequest(state=step.state, seat=seat), timeout=5)
    illegal = max(a.id for a in view.legal_actions) + 100_000
    with pytest.raises(grpc.RpcError) as err:
        stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=seat, action=illegal), timeout=5)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not legal" in err.value.details()
    idle = next(s for s in range(8) if s not in step.to_act)
    with pytest.raises(grpc.RpcError) as err:
        stub.Apply(engine_pb2.ApplyRequest(state=step.state, seat=idle, action=0), timeout=5)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "not asked" in err.value.details() or "not at this" in err.value.details()
    ok = stub.Apply(
        engine_pb2.ApplyRequest(state=step.state, seat=seat, action=view.legal_actions[0].id), timeout=5
    )
    assert ok.decisions == step.decisions + 1


def test_unknown_bot_and_bad_config_are_invalid_argument(game):
    _name, _, _, stub = game
    step = stub.NewGame(engine_pb2.NewGameRequest(seed=1), timeout=5)
    with pytest.raises(grpc.RpcError) as err:
        stub.SuggestAction(
            engine_pb2.BotRequest(state=step.state, seat=step.to_act[0], bot="nonsense"), timeout=5
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as err:
        stub.NewGame(engine_pb2.NewGameRequest(players=99), timeout=5)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_deal_key_deals_from_chacha20_and_a_bad_one_is_invalid_argument(game):
    """NewGameRequest.deal_key (docs/fairness.md): 32 bytes deal from ChaCha20 under them,
    the same deal every time and not the seed's; any other length is refused."""
    _name, _, _, stub = game
    key = bytes(range(32))
    keyed = json_from_bytes(stub.NewGame(engine_pb2.NewGameRequest(seed=3, deal_key=key), timeout=5).state)
    again = json_from_bytes(stub.NewGame(engine_pb2.NewGameRequest(seed=3, deal_key=key), timeout=5).state)
    seeded = json_from_bytes(stub.NewGame(engine_pb2.NewGameRequest(seed=3), timeout=5).state)
    assert keyed["generator"] == "chacha20" and keyed["deal_key"] == key.hex() and keyed == again
    cards = {k: v for k, v in keyed.items() if k not in ("rng", "generator", "deal_key")}
    assert "generator" not in seeded and cards != {k: v for k, v in seeded.items() if k != "rng"}
    for bad in (b"short", bytes(33)):
        with pytest.raises(grpc.RpcError) as err:
            stub.NewGame(engine_pb2.NewGameRequest(seed=3, deal_key=bad), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "deal_key" in err.value.details()


def test_metrics_are_exported_per_game_and_method(game):
    name, engine, _, stub = game
    stub.Ping(engine_pb2.PingRequest(), timeout=5)
    with pytest.raises(grpc.RpcError):
        stub.Apply(engine_pb2.ApplyRequest(state=b"nope"), timeout=5)
    body = (
        urllib.request.urlopen(f"http://127.0.0.1:{engine.metrics_port}/metrics", timeout=5).read().decode()
    )
    assert f'cultists_engine_rpc_duration_seconds_bucket{{game="{name}",le="0.001",method="Ping"}}' in body
    assert f'cultists_engine_rpc_errors_total{{code="INVALID_ARGUMENT",game="{name}",method="Apply"}}' in body


def test_two_player_crazy_cultists_is_invalid_argument_without_the_cc2_switch(engines):
    """CC-2: 2 players only as the sweep variant; refused in words, allowed with the switch."""
    if "crazy_cultists" not in engines:
        pytest.skip("Crazy Cultists is not installed")
    messages = load_messages("crazy_cultists")
    with grpc.insecure_channel(f"127.0.0.1:{engines['crazy_cultists'].port}") as channel:
        stub = engine_pb2_grpc.GameEngineStub(channel)
        with pytest.raises(grpc.RpcError) as err:
            stub.NewGame(engine_pb2.NewGameRequest(players=2, seed=1), timeout=5)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "two_players=true" in err.value.details()
        request = engine_pb2.NewGameRequest(players=2, seed=1)
        request.config.CopyFrom(messages.config_to_any({"two_players": True}))
        step = stub.NewGame(request, timeout=5)
        assert list(step.to_act) == [0]
        # Describe offers what the default rules seat: 3-6, and 2 only as the variant.
        desc = stub.Describe(engine_pb2.DescribeRequest(), timeout=5)
        assert (desc.min_players, desc.variant_min_players, desc.max_players) == (3, 2, 6)


@pytest.mark.parametrize("name", GAMES)
def test_packed_action_details_are_the_engines_and_never_shared(name):
    """The servicer builds each distinct action once (a cache by id, label and detail);
    every answer still carries exactly what the rules say, in a message of its own."""
    servicer = EngineServicer(load_game(name), load_messages(name))
    messages = load_messages(name)
    step = servicer.NewGame(engine_pb2.NewGameRequest(seed=4, with_legal=True), None)
    for _ in range(40):
        if step.terminal:
            break
        state = state_from_bytes(step.state)
        for entry in step.legal:
            for action in entry.actions:
                detail = messages.action()
                action.detail.Unpack(detail)
                assert message_to_dict(detail) == message_to_dict(
                    messages.action(**state.action_detail(action.id))
                )
        seat = step.to_act[0]
        first, again = (servicer._action(state, state.legal_actions(seat)[0]) for _ in range(2))
        first.detail.value = b"changed"
        assert again.detail.value != b"changed", "each answer has its own copy"
        choice = step.legal[0].actions[0].id
        step = servicer.Apply(
            engine_pb2.ApplyRequest(state=step.state, seat=seat, action=choice, with_legal=True), None
        )
