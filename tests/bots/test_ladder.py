"""`cultists ladder` and the ladder library: line-ups, seat rotation, output fields."""

from __future__ import annotations

import json

import pytest

from services.cli.ladder_cmd import split_bots
from services.cli.main import main
from services.engines.core.errors import BadConfig
from services.engines.core.ladder import lineups, play_ladder, slot_seats

from .support import spec_of

FIELDS = {
    "bot",
    "games",
    "wins",
    "draws",
    "win_rate",
    "wilson_low",
    "wilson_high",
    "fair_share",
    "beats_fair_share",
    "mu",
    "sigma",
    "ordinal",
}


def test_every_bot_sits_in_every_slot_equally():
    for bots, slots in [(2, 2), (2, 4), (3, 4), (3, 2), (4, 4), (5, 3)]:
        plan = lineups(bots, slots)
        for b in range(bots):
            per_slot = [sum(lineup[s] == b for lineup in plan) for s in range(slots)]
            assert len(set(per_slot)) == 1, (bots, slots, plan)
            assert per_slot[0] > 0
    assert lineups(2, 2) == [(0, 1), (1, 0)]
    assert lineups(3, 2) == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    with pytest.raises(BadConfig, match="at least two bots"):
        lineups(1, 2)


def test_tricky_cultists_slots_are_partnerships():
    assert slot_seats(spec_of("tricky_cultists"), 4) == [[0, 2], [1, 3]]
    assert slot_seats(spec_of("trash_cult"), 3) == [[0], [1], [2]]


def test_ladder_rotates_seats_on_the_same_deals_and_is_reproducible():
    spec = spec_of("trash_cult")
    one = play_ladder(spec, None, 2, ["heuristic", "random"], 6, seed=4, jobs=1).to_dict()
    two = play_ladder(spec, None, 2, ["heuristic", "random"], 6, seed=4, jobs=2, chunk=2).to_dict()
    assert one["games"] == 12 and one["lineups"] == [["heuristic", "random"], ["random", "heuristic"]]
    one.pop("seconds"), two.pop("seconds")
    assert one == two, "worker processes must not change what is measured"
    heuristic = one["standings"][0]
    assert heuristic["games"] == 12 and heuristic["fair_share"] == 0.5
    assert heuristic["wins"] > one["standings"][1]["wins"]
    assert heuristic["mu"] > one["standings"][1]["mu"]


def test_ladder_command_json_has_the_promised_fields(capsys):
    code = main(
        [
            "ladder",
            "crazy_cultists",
            "--players",
            "2",
            "--set",
            "two_players=true",  # CC-2: 2 players is the sweep variant
            "--games",
            "2",
            "--seed",
            "9",
            "--bots",
            "random,heuristic,ismcts:iterations=4,depth=4",
            "--json",
        ]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["game"] == "crazy_cultists" and doc["players"] == 2 and doc["deals"] == 2
    assert doc["bots"] == ["random", "heuristic", "ismcts:iterations=4,depth=4"]
    assert len(doc["lineups"]) == 6 and doc["games"] == 12
    assert [row["bot"] for row in doc["standings"]] == doc["bots"]
    for row in doc["standings"]:
        assert set(row) == FIELDS
        assert row["games"] == 8  # each bot is in 4 of the 6 line-ups, on both deals
        assert 0 <= row["wilson_low"] <= row["win_rate"] <= row["wilson_high"] <= 1
        assert row["fair_share"] == 0.5
    assert sum(row["wins"] for row in doc["standings"]) == doc["games"] - doc["draws"]


def test_ladder_command_table_for_teams(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # rich wraps the table to the terminal's width
    code = main(
        ["ladder", "tricky_cultists", "--games", "1", "--bots", "random,heuristic", "--set", "rounds=1"]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "teams rotated" in out and "95% Wilson" in out and "heuristic" in out and "mu" in out


@pytest.mark.parametrize(
    ("bots", "message"),
    [
        ("random,nosuch", "unknown bot 'nosuch'"),
        ("random;ismcts:iterationz=5", "has no parameter(s) iterationz"),
        ("heuristic", "at least two bots"),
        ("random,random", "each bot may appear once"),
    ],
)
def test_bad_bots_are_refused_with_a_clear_message(capsys, bots, message):
    assert main(["ladder", "trash_cult", "--players", "2", "--games", "1", "--bots", bots]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cultists: ") and message in err


def test_bot_lists_split_on_commas_and_semicolons():
    assert split_bots("random,heuristic") == ["random", "heuristic"]
    assert split_bots("random,ismcts:iterations=5,depth=3,heuristic") == [
        "random",
        "ismcts:iterations=5,depth=3",
        "heuristic",
    ]
    assert split_bots("ismcts:iterations=5;ismcts:ms=5,rollout=heuristic") == [
        "ismcts:iterations=5",
        "ismcts:ms=5,rollout=heuristic",
    ]
