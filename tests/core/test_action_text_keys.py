"""`State.action_text_key` may only name what an action's words depend on.

The engine builds an action's message once per config and text key (server.py,
`EngineServicer._action_bytes`), so a game whose key leaves out something its label or
detail reads would show one position's words in another. Seeded games of every game, at
every player count and under changed configs, must give every key one label and one
detail per config; and an engine's Steps must carry the very actions a View builds afresh.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import orjson
import pytest
from cultists.v1 import engine_pb2

from services.engines.core.messages import load_messages
from services.engines.core.server import EngineServicer
from services.engines.registry import available_games, load_game


def _configs(spec: Any) -> list[Any]:
    """The default config and each one-field change of it that the config accepts."""
    base = spec.make_config(None)
    found = [base]
    for f in dataclasses.fields(base):
        value = getattr(base, f.name)
        if isinstance(value, bool):
            changed: Any = not value
        elif isinstance(value, int):
            changed = value + 1
        else:
            continue
        try:
            found.append(spec.make_config({f.name: changed}))
        except Exception:
            continue
    return found


# Seeded games per config and player count: up to SEEDS, until POSITIONS decisions were
# played. Crazy and Tricky Cultists games (about 300 and 230 random decisions) all play
# their four; random Trash Cult games run 450 to 1,900, and two or three reach the positions.
SEEDS = 4
POSITIONS = 3000


@pytest.mark.parametrize("game", available_games())
def test_each_text_key_has_one_label_and_detail_per_config(game: str) -> None:
    spec = load_game(game)
    keyed = 0
    for config in _configs(spec):
        words: dict[Any, tuple[str, bytes]] = {}
        for players in range(spec.min_players, spec.max_players + 1):
            played = 0
            for seed in range(SEEDS):
                if played >= POSITIONS:
                    break
                try:
                    state = spec.new_state(config, players, seed)
                except Exception:
                    continue
                rng = random.Random(seed)
                while not state.is_terminal():
                    played += 1
                    for seat in state.to_act():
                        for action in state.legal_actions(seat):
                            key = state.action_text_key(action)
                            if key is None:
                                continue
                            keyed += 1
                            now = (state.action_label(action), orjson.dumps(state.action_detail(action)))
                            assert words.setdefault(key, now) == now, (game, config, key)
                    seat = state.to_act()[0]
                    state.apply(seat, rng.choice(state.legal_actions(seat)))
    assert keyed > 0  # the game does key its actions, so the check above checked something


@pytest.mark.parametrize("game", available_games())
def test_steps_carry_the_actions_a_view_builds(game: str) -> None:
    """Apply's legal lists come through the text-key cache; View's are built per action."""
    spec = load_game(game)
    engine = EngineServicer(spec, load_messages(game))
    rng = random.Random(5)
    for seed in range(3):
        step = engine.NewGame(engine_pb2.NewGameRequest(seed=seed, with_legal=True), None)
        while not step.terminal:
            for seat_actions in step.legal:
                view = engine.View(engine_pb2.ViewRequest(state=step.state, seat=seat_actions.seat), None)
                assert list(seat_actions.actions) == list(view.legal_actions)
            seat = step.to_act[0]
            action = rng.choice(next(s.actions for s in step.legal if s.seat == seat)).id
            step = engine.Apply(
                engine_pb2.ApplyRequest(state=step.state, seat=seat, action=action, with_legal=True), None
            )
