"""Each objective reads the figure a sweep report shows for the cell, with its interval."""

from __future__ import annotations

import pytest

from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.local import simulate_local
from services.balance.sweeps.spec import parse_spec
from services.balance.tune.objectives import MissingMetric, loss, measure, verdict
from services.balance.tune.spec import Objective


def _cell(spec_dict):
    spec = parse_spec(spec_dict)
    return aggregate(spec, simulate_local(spec, 1))["cells"][0]


def test_group_spread_reads_trash_cults_cults_and_names_a_missing_group():
    cell = _cell({"game": "trash_cult", "seed": 2, "games": 40, "players": [3], "max_turns": 80})
    rates = [g["rate"] for g in cell["groups"]["cult"]]
    m = measure(Objective("group_spread", (0.0, 0.2), group="cult"), cell)
    assert m.value == pytest.approx(max(rates) - min(rates))
    assert m.lo <= m.value <= m.hi
    with pytest.raises(MissingMetric, match="no group 'team'; groups: cult"):
        measure(Objective("group_spread", (0.0, 0.2), group="team"), cell)


def test_length_and_play_rate_and_the_verdicts():
    cell = _cell({"game": "crazy_cultists", "seed": 2, "games": 40, "players": [3]})
    length = measure(Objective("mean_length", (1.0, 1000.0)), cell)
    assert length.value == cell["length"]["mean"] and length.lo < length.value < length.hi
    card = cell["played"][0]
    played = measure(Objective("play_rate", (0.0, 1.0), card=card["label"]), cell)
    assert played.value == card["play_rate"]["rate"]
    never = measure(Objective("play_rate", (0.1, 0.9), card="No Such Card"), cell)
    assert never.value == 0.0 and never.hi > 0.0  # never seen: 0 with its Wilson interval
    assert verdict(Objective("mean_length", (1.0, 1000.0)), length) == "confirmed"
    target = (length.value - 0.01, length.value + 1000)
    assert verdict(Objective("mean_length", target), length) == "unproven"  # inside, interval not
    assert verdict(Objective("mean_length", (length.hi + 1, length.hi + 2)), length) == "miss"
    obj = Objective("seat_rate", (0.45, 0.55))
    assert loss(obj, type(length)(0.5, 0.4, 0.6)) == 0.0 and loss(
        obj, type(length)(0.55, 0.5, 0.6)
    ) == pytest.approx(1.0)
