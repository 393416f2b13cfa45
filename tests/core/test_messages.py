"""The fast dict <-> protobuf conversion agrees with protobuf's json_format exactly.

Engines build views and action details with the message constructors and the gateway reads
them back with a hand-written converter, because json_format is most of a View call's
cost. These tests hold the fast path to json_format's behaviour: the same message for
every view and detail of random games, the same error (or not) for malformed input, and
the same dict, key order included, on the way back.
"""

from __future__ import annotations

import copy
import json
import random

import pytest
from google.protobuf import json_format

from services.engines.core.messages import (
    _json_format_to_dict,
    dict_to_message,
    load_messages,
    message_to_dict,
)
from services.engines.registry import available_games, load_game

BAD_VALUES = [
    None,
    1,
    1.0,
    2.5,
    "x",
    True,
    [],
    [1],
    ["a"],
    {},
    {"a": 1},
    [None],
    "\ud800",
    2**40,
    [{"bogus": 1}],
]


def _slow(cls, d):
    try:
        return json_format.ParseDict(d, cls())
    except Exception as exc:
        return ("error", type(exc).__name__)


def _fast(cls, d):
    try:
        return dict_to_message(cls, d)
    except Exception as exc:
        return ("error", type(exc).__name__)


def _states(game: str, games: int = 4, steps: int = 150):
    spec = load_game(game)
    rng = random.Random(5)
    for _ in range(games):
        state = spec.new_state(None, None, rng.randrange(1 << 30))
        for _ in range(steps):
            if state.is_terminal():
                break
            yield state
            seat = state.to_act()[0]
            state.apply(seat, rng.choice(state.legal_actions(seat)))


@pytest.mark.parametrize("game", available_games())
def test_views_and_details_match_json_format(game):
    messages = load_messages(game)
    for state in _states(game):
        for seat in [None, *range(state.num_players)]:
            view = state.view(seat)
            fast, slow = _fast(messages.view, view), _slow(messages.view, view)
            assert fast == slow
            assert json.dumps(message_to_dict(fast)) == json.dumps(_json_format_to_dict(fast))
        seat = state.to_act()[0]
        for action in state.legal_actions(seat):
            detail = state.action_detail(action)
            fast = _fast(messages.action, detail)
            assert fast == _slow(messages.action, detail)
            assert json.dumps(message_to_dict(fast)) == json.dumps(_json_format_to_dict(fast))


@pytest.mark.parametrize("game", available_games())
def test_malformed_views_fail_or_convert_exactly_like_json_format(game):
    messages = load_messages(game)
    base = next(s for i, s in enumerate(_states(game, games=1)) if i == 30).view(0)
    for key, value in base.items():
        for bad in BAD_VALUES:
            doc = dict(base)
            doc[key] = bad
            assert _fast(messages.view, doc) == _slow(messages.view, doc), (key, bad)
        nested = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else value
        if isinstance(nested, dict):
            for inner in list(nested):
                for bad in BAD_VALUES[:10]:
                    doc = copy.deepcopy(base)
                    target = doc[key][0] if isinstance(doc[key], list) else doc[key]
                    target[inner] = bad
                    assert _fast(messages.view, doc) == _slow(messages.view, doc), (key, inner, bad)
    for bad in [{"handSize": 1}, {"bogus": 2}]:
        assert _fast(messages.view, bad) == _slow(messages.view, bad)
