"""The engine's kept states (issued.py) are a shortcut to the very state the bytes hold:
every answer on a state the engine issued equals the answer of an engine reading it back."""

from __future__ import annotations

import random

import orjson
import pytest
from cultists.v1 import engine_pb2

from services.engines.core.issued import IssuedStates
from services.engines.core.messages import load_messages
from services.engines.core.serial import MAC_MARK, state_from_bytes, state_to_bytes
from services.engines.core.server import EngineServicer
from services.engines.registry import available_games, load_game


@pytest.fixture()
def state():
    return load_game("crazy_cultists").new_state(None, 4, seed=7)


def test_recall_gives_a_fresh_copy_of_the_state_the_bytes_hold(state):
    issued = IssuedStates()
    data = state_to_bytes(state)
    issued.remember(data, state)
    first = issued.recall(data)
    assert first is not None and first is not state
    assert first == state_from_bytes(data)
    seat = first.to_act()[0]
    first.apply(seat, first.legal_actions(seat)[0])
    assert issued.recall(data) == state_from_bytes(data), "a recalled copy's changes stay its own"


def test_take_hands_out_the_object_once_with_its_legal_lists(state):
    issued = IssuedStates()
    data = state_to_bytes(state)
    seat = state.to_act()[0]
    issued.remember(data, state, {seat: state.legal_actions(seat)})
    taken = issued.take(data)
    assert taken is not None and taken[0] is state and taken[1] == {seat: state.legal_actions(seat)}
    assert issued.take(data) is None and issued.recall(data) is None and len(issued) == 0


def test_only_the_exact_bytes_are_found(state):
    issued = IssuedStates()
    data = state_to_bytes(state)
    issued.remember(data, state)
    body, mark, mac = data.rpartition(MAC_MARK)
    doc = orjson.loads(body)
    doc["turn"] += 1
    assert issued.recall(orjson.dumps(doc) + mark + mac) is None, "same MAC, other body"
    assert issued.recall(body) is None
    assert issued.recall(b"") is None
    assert issued.take(orjson.dumps(doc) + mark + mac) is None and len(issued) == 1


def test_the_oldest_go_first_past_the_bound():
    spec = load_game("trash_cult")
    issued = IssuedStates(size=3)
    states = [spec.new_state(None, 2, seed=s) for s in range(4)]
    datas = [state_to_bytes(s) for s in states]
    for data, kept in zip(datas, states, strict=True):
        issued.remember(data, kept)
    assert len(issued) == 3
    assert issued.recall(datas[0]) is None
    assert all(issued.recall(d) == s for d, s in zip(datas[1:], states[1:], strict=True))
    with pytest.raises(ValueError):
        IssuedStates(size=0)


class _Refused(Exception):
    pass


class _Context:
    """What the servicer's error path needs of gRPC's context: abort raises."""

    def abort(self, code, detail):
        raise _Refused(code, detail)


def _answer(servicer, request):
    try:
        return servicer.Apply(request, _Context())
    except _Refused as exc:
        return exc.args


@pytest.mark.parametrize("name", available_games())
def test_refusals_on_issued_states_equal_refusals_read_from_bytes(name):
    """A move checked against the legal lists kept with a state is refused exactly as one
    checked by the rules on the state read from its bytes."""
    spec, messages = load_game(name), load_messages(name)
    playing, reading = EngineServicer(spec, messages), EngineServicer(spec, messages)
    step = playing.NewGame(engine_pb2.NewGameRequest(seed=3, with_legal=True), None)
    pick = random.Random(3)
    for turn in range(60):
        if step.terminal:
            break
        seat = step.to_act[0]
        legal = [a.id for a in step.legal[0].actions]
        if turn % 6 == 0:
            state = state_from_bytes(step.state)
            others = [s for s in range(state.num_players) if s not in step.to_act]
            wrong = [(seat, max(legal) + 1000), (seat, -1), (99, legal[0])] + [
                (s, legal[0]) for s in others[:1]
            ]
            for bad_seat, bad_action in wrong:
                # kept as the engine keeps it: the refused move before took it
                kept = {entry.seat: [a.id for a in entry.actions] for entry in step.legal}
                playing._issued.remember(step.state, state_from_bytes(step.state), kept)
                request = engine_pb2.ApplyRequest(state=step.state, seat=bad_seat, action=bad_action)
                refused = _answer(playing, request)
                assert isinstance(refused, tuple), f"{bad_seat}, {bad_action} was accepted"
                assert refused == _answer(reading, request)
            playing._issued.remember(step.state, state_from_bytes(step.state), kept)
        action = pick.choice(legal)
        step = playing.Apply(
            engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True), None
        )


@pytest.mark.parametrize("name", available_games())
def test_answers_on_issued_states_equal_answers_read_from_bytes(name):
    """One engine plays a game on the states it issued (kept); another, its kept states
    emptied before every call, reads each one back from its bytes: every Apply and View
    answer is the same."""
    spec, messages = load_game(name), load_messages(name)
    playing, reading = EngineServicer(spec, messages), EngineServicer(spec, messages)
    step = playing.NewGame(engine_pb2.NewGameRequest(seed=9, with_legal=True), None)
    pick = random.Random(9)
    for _ in range(300):
        if step.terminal:
            break
        assert playing._issued.recall(step.state) is not None
        seat = step.to_act[0]
        view = engine_pb2.ViewRequest(state=step.state, seat=seat)
        reading._issued = IssuedStates()
        assert playing.View(view, None) == reading.View(view, None)
        action = pick.choice(step.legal[0].actions).id
        request = engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True)
        step = playing.Apply(request, None)
        assert playing._issued.recall(request.state) is None, "a move takes its state"
        reading._issued = IssuedStates()
        assert step == reading.Apply(request, None)
        assert step == playing.Apply(request, None), "a retry reads the bytes back"
