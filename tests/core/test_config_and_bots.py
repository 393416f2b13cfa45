"""Config parsing is the one gate for --set, JSON bodies and protobuf configs."""

from dataclasses import dataclass

import pytest

from services.engines.core.bots import parse_bot_spec
from services.engines.core.config import config_from_mapping, config_to_dict, parse_set_options
from services.engines.core.errors import BadConfig


@dataclass(frozen=True)
class Sample:
    max_turns: int = 500
    dark_powers: bool = False
    variant: str = "base"
    cults: tuple[str, ...] = ()

    def validate(self) -> None:
        if self.max_turns < 1:
            raise BadConfig("max_turns must be at least 1")


def test_strings_from_the_command_line_are_coerced():
    cfg = config_from_mapping(
        Sample, parse_set_options(["max_turns=40", "dark_powers=true", "cults=rat,skunk"])
    )
    assert cfg == Sample(max_turns=40, dark_powers=True, cults=("rat", "skunk"))
    assert config_to_dict(cfg)["cults"] == ["rat", "skunk"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"nope": 1}, "unknown config field"),
        ({"max_turns": "many"}, "whole number"),
        ({"max_turns": 2.5}, "whole number"),
        ({"dark_powers": "maybe"}, "true or false"),
        ({"max_turns": 0}, "at least 1"),
    ],
)
def test_bad_values_are_refused_in_words(values, message):
    with pytest.raises(BadConfig, match=message):
        config_from_mapping(Sample, values)


def test_set_option_needs_key_value():
    with pytest.raises(BadConfig, match="key=value"):
        parse_set_options(["novalue"])


def test_bot_spec_parsing():
    assert parse_bot_spec("ismcts:ms=50,rollout=heuristic") == (
        "ismcts",
        {"ms": "50", "rollout": "heuristic"},
    )
    assert parse_bot_spec("random") == ("random", {})
    with pytest.raises(BadConfig):
        parse_bot_spec("ismcts:iterations")
