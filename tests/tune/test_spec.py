"""Tune specs are refused before any game is played, with a message that names the problem."""

from __future__ import annotations

from typing import Any

import pytest

from services.balance.sweeps.spec import SpecError
from services.balance.tune.spec import parse_tune_spec

GOOD: dict[str, Any] = {
    "game": "crazy_cultists",
    "players": [2],
    "config": {"two_players": True},
    "search": {"threshold": {"low": 8, "high": 14}, "starting_hand": [1, 2, 3]},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.45, 0.55]}],
    "budget": 1000,
}


def test_a_good_spec_parses_and_round_trips():
    spec = parse_tune_spec(GOOD)
    assert [p.name for p in spec.params] == ["threshold", "starting_hand"]
    assert spec.sampler == "tpe"
    assert parse_tune_spec(spec.to_dict()) == spec
    several = parse_tune_spec(
        {**GOOD, "objectives": [*GOOD["objectives"], {"metric": "seat_spread", "target": 0.1}]}
    )
    assert several.sampler == "nsga2"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"bogus": 1}, "'bogus' is not a field here"),
        ({"search": {"no_such_field": [1, 2]}}, "not a config field"),
        ({"search": {"threshold": {"low": 14, "high": 8}}}, "must be below high"),
        ({"search": {"threshold": {"low": 2, "high": 8}}}, "threshold=2"),  # below candles_to_win
        ({"search": {"two_players": [True, False]}}, "also fixed in config"),
        ({"search": {"variant": {"low": 1, "high": 2}}}, "not a number"),
        ({"objectives": [{"metric": "fun"}]}, "'objectives.0.metric': input should be 'seat_rate'"),
        ({"objectives": [{"metric": "seat_rate", "seat": 2, "target": [0.4, 0.6]}]}, "seat must be 0..1"),
        ({"objectives": [{"metric": "seat_rate", "target": [0.6, 0.4]}]}, "target range"),
        ({"objectives": [{"metric": "seat_spread", "target": [0, 0.1]}]}, "between 0 and 1"),
        ({"objectives": [{"metric": "group_spread", "target": 0.1}]}, "names its group"),
        ({"budget": 0}, "'budget': input should be greater than or equal to 1"),
        ({"budget": 50}, "below one first look"),
        ({"players": [2], "config": {}}, "two_players"),  # CC-2: refused by the sweep parser
        ({"sampler": "grid"}, "'sampler': input should be 'tpe', 'nsga2' or 'random'"),
    ],
)
def test_bad_specs_are_refused_with_the_reason(change, words):
    with pytest.raises(SpecError) as err:
        parse_tune_spec({**GOOD, **change})
    assert words in str(err.value)


def test_the_cli_refuses_a_bad_spec_with_status_2(tmp_path, capsys):
    from services.cli.main import main as cli

    path = tmp_path / "bad.yaml"
    path.write_text("game: crazy_cultists\nsearch: {threshold: {low: 8, high: 12}}\nbudget: 100\n")
    assert cli(["tune", str(path), "--local"]) == 2
    assert "objectives" in capsys.readouterr().err
