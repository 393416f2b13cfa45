"""Config validation and the config's protobuf round trip."""

from __future__ import annotations

import dataclasses

import pytest

from services.engines.core.config import config_to_dict
from services.engines.core.errors import BadConfig
from services.engines.crazy_cultists import GAME
from services.engines.crazy_cultists.proto import MESSAGES


def test_every_ruling_number_is_a_config_field_with_its_default():
    cfg = GAME.make_config()
    assert (cfg.hand_limit, cfg.starting_hand, cfg.threshold, cfg.candles_to_win) == (
        3,
        3,
        10,
        5,
    )  # CC-2, CC-4
    assert (cfg.beast_threshold, cfg.beast_candles_to_win, cfg.variant) == (6, 3, "base")  # CC-9
    assert (cfg.dark_powers, cfg.dark_favor_4, cfg.black_spire_points) == (False, 2, 3)  # CC-10
    assert (cfg.optional_setup, cfg.remove_fall_from_grace, cfg.max_turns) == (False, 2, 500)  # CC-11, G-5


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"favor_2": -1}, "favor_2 must not be negative"),
        ({"variant": "evil"}, "variant must be one of"),
        ({"starting_hand": 4}, "must not exceed hand_limit"),
        ({"hand_limit": 0, "starting_hand": 0}, "hand_limit must be at least 1"),
        ({"threshold": 4}, "must be at least candles_to_win"),
        ({"beast_candles_to_win": 0}, "at least 1"),
        ({"optional_setup": True, "evil_eye": 0}, "optional setup removes 1 evil_eye"),
        ({"favor_1": 0, "favor_2": 0, "favor_3": 0, "favor_4": 0}, "at least one favor card"),
        ({"max_turns": 0}, "max_turns must be at least 1"),
        ({"dark_powers": "maybe"}, "wants true or false"),
    ],
)
def test_impossible_configs_are_refused_in_words(values, words):
    with pytest.raises(BadConfig, match=words):
        GAME.make_config(values)


def test_a_deck_too_small_to_deal_is_refused():
    small = {name: 0 for name in ("fall_from_grace", "polymorphization", "infernal_inferno", "toiling_trouble",
             "hex_o_rama", "evil_eye", "beelze_beatdown", "nerdronomicon", "counter_spell", "switcheroo")}  # fmt: skip
    small.update(favor_1=5, favor_2=0, favor_3=0, favor_4=0)
    with pytest.raises(BadConfig, match="too few to deal"):
        GAME.make_config({**small, "favor_1": 5})
    with pytest.raises(BadConfig, match="too few to deal"):
        GAME.new_state({**small, "favor_1": 9}, 4, seed=1)


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"variant": "beast", "dark_powers": True, "black_spire_points": 4},
        {"optional_setup": True, "max_turns": 9},
    ],
)
def test_config_round_trips_through_protobuf(values):
    cfg = GAME.make_config(values)
    back = GAME.make_config(MESSAGES.config_from_any(MESSAGES.config_to_any(config_to_dict(cfg))))
    assert back == cfg


def test_config_message_has_exactly_the_config_fields():
    fields = {f.name for f in dataclasses.fields(GAME.config_class)}
    assert set(MESSAGES.config.DESCRIPTOR.fields_by_name) == fields
