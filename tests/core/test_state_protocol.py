"""A game's state class must define the whole protocol, and says so at once when it does not.

`State` is an extension type when compiled (core/game.pxd), which cannot have ABCMeta, so
abstract methods no longer stop a half-written game from being instantiated; `GameSpec`
checks `State.REQUIRED` instead, when the game is defined, naming what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from services.engines.core.game import GameSpec, State
from services.engines.registry import available_games, load_game
from tests.support.planted_game import PlantedState


@dataclass(frozen=True)
class _Config:
    max_turns: int = 10

    def validate(self) -> None:
        pass


def test_a_state_class_missing_a_method_is_refused_by_name() -> None:
    class Half(State):
        FIELDS = ()

        def to_act(self) -> list[int]:
            return []

    with pytest.raises(TypeError, match=r"Half does not define legal_actions, _apply, is_terminal"):
        GameSpec("half", "Half", 2, 2, 2, _Config, Half)


def test_the_base_methods_raise_not_implemented() -> None:
    state = State(_Config(), 2, 0)
    with pytest.raises(NotImplementedError):
        state.legal_actions(0)
    with pytest.raises(NotImplementedError):
        state.apply(0, 0)


def test_every_game_and_the_test_game_define_the_whole_protocol() -> None:
    for name in available_games():
        assert load_game(name).state_class.spec.name == name
    GameSpec("planted-check", "Planted", 2, 2, 2, _Config, type("Sub", (PlantedState,), {}))


def test_a_spec_is_found_for_a_class_and_its_instances() -> None:
    spec = load_game("tricky_cultists")
    state = spec.new_state(None, 4, 1)
    assert state.spec is spec is type(state).spec
    with pytest.raises(TypeError):
        hash(state)
    assert state.clone() == state
