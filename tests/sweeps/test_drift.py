"""Drift between nights: two-sample tests, one BH family, a practical effect size (issue 13 item 1).

Real nights at small sizes (the nightly suite's own heuristic bots, in-process): an A/A
night (same code, another master seed) flags nothing, the same night replayed flags
nothing, and a planted rule change is flagged exactly where it was planted. Synthetic
nights check the effect-size rule and the report fields.
"""

from __future__ import annotations

import json

import pytest

from services.cli.main import main
from services.engines.core.errors import BadConfig
from workers.sweeps import night
from workers.sweeps.aggregate import aggregate
from workers.sweeps.drift import DriftSettings, NightGame, compare_nights
from workers.sweeps.local import run_local
from workers.sweeps.spec import parse_spec

GAMES = 60  # per cell: about 5 s for the three trash_cult cells on a loaded machine


def _night(seed: int, overrides: dict | None = None) -> dict[str, NightGame]:
    (spec,) = night.suite(GAMES, seed, {"trash_cult": overrides} if overrides else None, only=["trash_cult"])
    summary, _replays, results = run_local(spec, processes=1)
    return {"trash_cult": night.night_game(spec, summary, results)}


@pytest.fixture(scope="module")
def base_night() -> dict[str, NightGame]:
    return _night(seed=1)


def test_the_same_night_again_is_paired_and_flags_nothing(base_night):
    report = compare_nights(base_night, _night(seed=1))
    part = report["games"]["trash_cult"]
    # 3 cells x (seat or team units, draw, turn cap, mean turns) and the cult/card rates
    assert part["compared"] > 20 and report["family_size"] == part["compared"]
    assert part["drifted"] == []


def test_an_aa_night_with_another_seed_flags_nothing(base_night):
    report = compare_nights(base_night, _night(seed=2))
    part = report["games"]["trash_cult"]
    assert part["compared"] > 20 and part["drifted"] == []


def test_a_planted_rule_change_is_flagged_where_it_was_planted(base_night):
    # Two-player games need 6 food (TC rulebook default); at 2 they end far sooner. The
    # same seeds are played, so the comparison is paired; 3p and 4p are untouched and
    # replay identically, so nothing else can drift.
    report = compare_nights(base_night, _night(seed=1, overrides={"food_needed_2p": 2}))
    drifted = report["games"]["trash_cult"]["drifted"]
    assert drifted, "a two-player game needing a third of the food must move its length"
    assert {d["cell"] for d in drifted} == {"base | 2p | heuristic x2"}
    length = next(d for d in drifted if d["metric"] == "mean turns")
    assert length["test"] == "paired-t" and length["after"] < length["before"] - 1
    assert length["interval"][0] <= length["difference"] <= length["interval"][1] < 0
    assert length["p_adjusted"] <= 0.05 and length["p"] <= length["p_adjusted"]


def _synthetic(seat0_wins: int, games: int, seed: int = 0) -> dict[str, NightGame]:
    spec = parse_spec(
        {
            "game": "crazy_cultists",
            "seed": seed,
            "games": games,
            "players": [2],
            "chunk": games,
            "config": {"two_players": True},  # CC-2's 2-player variant
        }
    )
    winners = [[0] if g < seat0_wins else [1] for g in range(games)]
    result = {"chunk": "0-0", "cell": 0, "start": 0, "games": games, "winners": winners,
              "turns": [20 + g % 5 for g in range(games)], "decisions": [60] * games,
              "capped": [0] * games, "facts": []}  # fmt: skip
    summary = {"aggregates": aggregate(spec, [result])}
    return {"crazy_cultists": night.night_game(spec, summary, [result])}


def test_a_drift_reports_both_values_the_difference_its_interval_and_adjusted_p():
    # Independent nights (different seeds): seat 0 from 50 % to 60 % over 2,000 games.
    report = compare_nights(_synthetic(1000, 2000, seed=0), _synthetic(1200, 2000, seed=5000))
    (d,) = report["games"]["crazy_cultists"]["drifted"]
    assert (d["cell"], d["metric"], d["test"]) == ("base | 2p | random x2", "seat 0 win rate", "score")
    assert (d["before"], d["after"], d["difference"]) == (0.5, 0.6, 0.1)
    assert d["interval"][0] < 0.1 < d["interval"][1] and d["p_adjusted"] < 1e-6


def _counts(seat0_wins: int, games: int) -> dict[str, NightGame]:
    """A night given by its counts only (no per-game outcomes: compared as independent samples)."""
    rate = {"wins": 0, "trials": games}
    cell = {"label": "base | 2p | random x2", "games": games, "players": 2,
            "seats": [{"seat": 0, "wins": seat0_wins, "trials": games},
                      {"seat": 1, "wins": games - seat0_wins, "trials": games}],
            "draws": rate, "capped": rate, "length": {"mean": 20.0, "sd": 3.0}}  # fmt: skip
    return {"crazy_cultists": NightGame("crazy_cultists", {"cells": [cell]}, {})}


def test_a_significant_change_smaller_than_the_effect_size_is_not_drift():
    # 50.0 % -> 51.5 % over 200,000 games: far beyond chance, but under 2 points.
    before, after = _counts(100_000, 200_000), _counts(103_000, 200_000)
    report = compare_nights(before, after)
    assert report["games"]["crazy_cultists"]["drifted"] == []
    strict = compare_nights(before, after, DriftSettings(min_rate_change=0.01))
    assert [d["metric"] for d in strict["games"]["crazy_cultists"]["drifted"]] == ["seat 0 win rate"]


def test_nightly_command_compares_stores_and_previews(tmp_path, capsys):
    args = ["nightly", "--local", "-j", "1", "--games", "2", "--data", str(tmp_path), "--json"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["previous_night"] is None and set(first["games"]) == {
        "crazy_cultists",
        "trash_cult",
        "tricky_cultists",
    }
    assert all(g == {"compared": 0, "drifted": []} for g in first["games"].values())
    # A preview of a rule change: compared with the stored night, stored, never the baseline.
    assert main([*args, "--set", "trash_cult:food_needed_2p=2"]) == 0
    preview = json.loads(capsys.readouterr().out)
    assert preview["previous_night"] == first["night"] and preview["night"].endswith("-preview")
    for game, part in preview["games"].items():
        assert part["compared"] > 0, game
        for d in part["drifted"]:
            assert set(d) >= {"cell", "metric", "before", "after", "p_adjusted"}
    archive = night.NightArchive(tmp_path / "nightly")
    assert archive.night_ids() == [first["night"], preview["night"]] and archive.latest() == first["night"]
    assert json.loads((tmp_path / "nightly" / preview["night"] / "night.json").read_text())["overrides"] == {
        "trash_cult": {"food_needed_2p": 2}
    }


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("trash_cult", "expected GAME:FIELD=VALUE"),
        ("nosuch:threshold=3", "no installed game 'nosuch'"),
        ("trash_cult:no_such_field=3", "no_such_field"),
    ],
)
def test_bad_overrides_are_refused_before_anything_runs(tmp_path, capsys, option, message):
    assert main(["nightly", "--local", "--games", "2", "--data", str(tmp_path), "--set", option]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "nightly").exists()
    with pytest.raises(BadConfig):
        night.suite(2, 1, night.parse_overrides([option]))


def test_a_game_missing_from_a_night_is_compared_with_its_last_stored_night(tmp_path):
    # A stuck sweep leaves a game out of a night; the next night still finds its last one.
    archive = night.NightArchive(tmp_path)
    crazy, other = _counts(500, 1000), _counts(500, 1000)
    both = {"crazy_cultists": crazy["crazy_cultists"], "trash_cult": _trash_counts()}
    first = night.close_night(archive, both)
    second = night.close_night(archive, {"crazy_cultists": other["crazy_cultists"]})
    third = night.close_night(archive, {"trash_cult": _trash_counts()})
    assert third["previous_night"] == second["night"]
    assert third["games"]["trash_cult"]["previous_night"] == first["night"]
    assert third["games"]["trash_cult"]["compared"] > 0
    preview = night.close_night(archive, both, preview=True)
    assert archive.latest() == third["night"] != preview["night"]


def _trash_counts() -> NightGame:
    rate = {"wins": 0, "trials": 100}
    cell = {"label": "base | 3p | heuristic x3", "games": 100, "players": 3,
            "seats": [{"seat": s, "wins": 33, "trials": 100} for s in range(3)],
            "draws": rate, "capped": rate, "length": {"mean": 40.0, "sd": 5.0}}  # fmt: skip
    return NightGame("trash_cult", {"cells": [cell]}, {})
