"""Drift between nights: two-sample tests, one BH family, a practical effect size (issue 13 item 1).

Real nights at small sizes (the nightly suite's own heuristic bots, in-process): an A/A
night (same code, another master seed) flags nothing, the same night replayed flags
nothing, and a planted rule change is flagged exactly where it was planted. Synthetic
nights check the effect-size rule and the report fields.
"""

from __future__ import annotations

import json

import pytest

from services.balance.sweeps import night
from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.drift import (
    DriftSettings,
    NightGame,
    cell_comparisons,
    compare_nights,
    pair_nights,
)
from services.balance.sweeps.local import run_local
from services.balance.sweeps.spec import parse_spec
from services.cli.main import main
from services.engines.core.errors import BadConfig
from services.engines.registry import load_game

GAMES = 60  # per cell: about 5 s for the three trash_cult cells on a loaded machine


def _night(seed: int, overrides: dict | None = None) -> dict[str, NightGame]:
    (spec,) = night.suite(GAMES, seed, {"trash_cult": overrides} if overrides else None, only=["trash_cult"])
    summary, _replays, results = run_local(spec, processes=1)
    return {"trash_cult": night.night_game(spec, summary, results)}


@pytest.fixture(scope="module")
def base_night() -> dict[str, NightGame]:
    return _night(seed=1)


def _tests(a: NightGame, b: NightGame) -> dict[tuple[str, str], str]:
    """(cell, metric) -> the test that compared it, night `a` against night `b`."""
    gspec = load_game(a.game)
    old = {c["label"]: c for c in a.aggregates["cells"]}
    players = {c["label"]: c["players"] for c in b.aggregates["cells"]}
    pairs = pair_nights(gspec, players, a.outcomes, b.outcomes)
    return {
        (c["label"], metric): comp.test
        for c in b.aggregates["cells"]
        for metric, _kind, comp in cell_comparisons(gspec, old[c["label"]], c, pairs.get(c["label"]))
    }


def test_the_same_night_again_is_paired_and_flags_nothing(base_night):
    again = _night(seed=1)
    report = compare_nights(base_night, again)
    part = report["games"]["trash_cult"]
    # 3 cells x (seat or team units, draw, turn cap, mean turns) and the cult/card rates
    assert part["compared"] > 20 and report["family_size"] == part["compared"]
    assert part["drifted"] == []
    # Every metric defined on the same games both nights is paired, cults and cards too;
    # only win-when-played (its trials are the plays) stays independent.
    tests = _tests(base_night["trash_cult"], again["trash_cult"])
    assert len(tests) == part["compared"] and sum(part["tests"].values()) == part["compared"]
    for (_cell, metric), test in tests.items():
        assert test == ("score" if metric.endswith("win-when-played") else "mcnemar" if "rate" in metric
                        else "paired-t"), metric  # fmt: skip
    assert any(m.startswith("cult ") for _c, m in tests) and any(m.endswith("play rate") for _c, m in tests)


def test_an_aa_night_with_another_seed_flags_nothing_and_is_unpaired(base_night):
    other = _night(seed=2)
    report = compare_nights(base_night, other)
    part = report["games"]["trash_cult"]
    assert part["compared"] > 20 and part["drifted"] == []
    # Other seeds: no game has a partner, every metric is two independent samples.
    assert set(part["tests"]) == {"score", "welch"}
    assert set(_tests(base_night["trash_cult"], other["trash_cult"]).values()) == {"score", "welch"}


@pytest.mark.parametrize(
    ("overrides", "metric", "test"),
    [
        # Rat's food (TC-2) made too scarce to win with: the Rat cult stops winning, in
        # the same games it sat in before (the deal and the picks are unchanged).
        ({"donuts": 2}, "cult Rat win rate", "mcnemar-exact"),
        # Pigeon Thief taken out of the deck (TC-1): never played, so it leaves the
        # night's tables; it is still compared, as played in 0 of tonight's games.
        ({"pigeon_thieves": 0}, "Pigeon Thief play rate", "mcnemar"),
    ],
)
def test_a_planted_cult_or_card_change_is_flagged_paired(base_night, overrides, metric, test):
    report = compare_nights(base_night, _night(seed=1, overrides=overrides))
    drifted = [d for d in report["games"]["trash_cult"]["drifted"] if d["metric"] == metric]
    assert {d["cell"] for d in drifted} == {f"base | {n}p | heuristic x{n}" for n in (2, 3, 4)}
    for d in drifted:
        assert d["test"] == test and d["after"] == 0 < d["before"] and d["p_adjusted"] <= 0.05


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


def _cult_night(cults: list[list[str]], winners: list[list[int]]) -> NightGame:
    """A 2-player Trash Cult night on seeds 0.. given each game's cults and winners."""
    games = len(cults)
    spec = parse_spec({"game": "trash_cult", "seed": 0, "games": games, "players": [2], "chunk": games})
    result = {"chunk": "0-0", "cell": 0, "start": 0, "games": games, "winners": winners,
              "turns": [30] * games, "decisions": [90] * games, "capped": [0] * games,
              "facts": [{"groups": {"cult": c}, "played": {}} for c in cults]}  # fmt: skip
    return night.night_game(spec, {"aggregates": aggregate(spec, [result])}, [result])


def test_a_cult_pairs_only_on_the_same_games_and_once_a_game():
    winners = [[g % 2] for g in range(100)]
    before = [["Rat", "Skunk"]] * 100
    # Tonight the same seeds deal Raccoon instead of Rat in the first 10 games (a changed
    # pick); both nights game 99 has two "none" seats (a game capped in the pick phase).
    after = [["Raccoon", "Skunk"]] * 10 + [["Rat", "Skunk"]] * 89 + [["none", "none"]]
    before[99] = ["none", "none"]
    a, b = _cult_night(before, winners), _cult_night(after, winners)
    tests = {metric: test for (_cell, metric), test in _tests(a, b).items()}
    # Rat sat in different games (pairing undefined), "none" twice in one game (not one
    # trial a game): independent. Skunk sat in games 0-98 both nights: paired.
    assert tests["cult Rat win rate"] == tests["cult none win rate"] == "score"
    assert tests["cult Skunk win rate"] == "mcnemar" and tests["seat 0 win rate"] == "mcnemar"


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
    assert all(
        g == {"compared": 0, "drifted": [], "metrics": [], "power": []} for g in first["games"].values()
    )
    # A preview of a rule change: compared with the stored night, stored, never the baseline.
    assert main([*args, "--set", "trash_cult:food_needed_2p=2"]) == 0
    preview = json.loads(capsys.readouterr().out)
    assert preview["previous_night"] == first["night"] and preview["night"].endswith("-preview")
    for game, part in preview["games"].items():
        assert part["compared"] > 0, game
        for d in part["drifted"]:
            assert set(d) >= {"cell", "metric", "before", "after", "p_adjusted"}
        # Every compared metric is kept, drifted or not, with raw and adjusted p and its MDE.
        assert len(part["metrics"]) == part["compared"], game
        for m in part["metrics"]:
            assert 0 <= m["p"] <= m["p_adjusted"] <= 1 and m["mde"] is not None, (game, m)
            assert m["mde"] >= (1.0 if "turns" in m["metric"] else 0.02)
        assert {m["metric"] for m in part["power"]} == {m["metric"] for m in part["metrics"] if m["mde"]}
    archive = night.NightArchive(tmp_path / "nightly")
    assert archive.night_ids() == [first["night"], preview["night"]] and archive.latest() == first["night"]
    # Same seeds: the preview was paired, block by block, with the night read back from disk.
    stored = json.loads((tmp_path / "nightly" / preview["night"] / "drift.json").read_text())
    for game, part in stored["games"].items():
        assert "mcnemar" in part["tests"] and set(part["tests"]) <= {
            "mcnemar",
            "mcnemar-exact",
            "paired-t",
            "score",
        }, game
    assert json.loads((tmp_path / "nightly" / preview["night"] / "night.json").read_text())["overrides"] == {
        "trash_cult": {"food_needed_2p": 2}
    }


def test_a_preview_with_no_stored_night_stores_a_baseline_first_and_says_so(tmp_path, capsys):
    """The README's preview on a fresh install: there is no night to compare with, so the
    rules as they are play first (same suite, same seeds), and the preview is compared
    with that baseline instead of with nothing."""
    args = ["nightly", "--local", "-j", "1", "--games", "2", "--data", str(tmp_path), "--json"]
    assert main([*args, "--set", "trash_cult:food_needed_2p=2"]) == 0
    out, err = capsys.readouterr()
    preview = json.loads(out)
    said = " ".join(err.split())  # the console wraps its lines at the terminal's width
    assert "playing a baseline night of the rules as they are first" in said
    archive = night.NightArchive(tmp_path / "nightly")
    [baseline, stored] = archive.night_ids()
    assert archive.latest() == baseline == preview["previous_night"] and stored == preview["night"]
    assert json.loads((tmp_path / "nightly" / baseline / "night.json").read_text())["overrides"] == {}
    assert all(part["compared"] > 0 for part in preview["games"].values())
    # With a night stored, the next preview plays no baseline.
    assert main([*args, "--set", "trash_cult:food_needed_2p=2"]) == 0
    assert "baseline" not in capsys.readouterr().err
    assert len(archive.night_ids()) == 3


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


def test_a_night_stored_before_the_bit_masks_is_compared_from_its_counts(tmp_path):
    # An older night kept each cell's games as lists (seeds, winners...), with no plays:
    # pairing against it could read "not recorded" as "not played", so it is not paired.
    import gzip

    import orjson

    old = _synthetic(1000, 2000)["crazy_cultists"]
    folder = tmp_path / "20240101T000000000000Z"
    folder.mkdir()
    legacy = {
        "seeds": list(range(2000)),
        "winners": [[0]] * 2000,
        "turns": [20] * 2000,
        "capped": [False] * 2000,
    }
    data = {
        "game": "crazy_cultists",
        "aggregates": old.aggregates,
        "outcomes": {"base | 2p | random x2": legacy},
    }
    (folder / "crazy_cultists.json.gz").write_bytes(gzip.compress(orjson.dumps(data)))
    (folder / "drift.json").write_bytes(b"{}")
    (folder / "night.json").write_bytes(orjson.dumps({"games": ["crazy_cultists"]}))
    archive = night.NightArchive(tmp_path)
    assert archive.load(folder.name)["crazy_cultists"].outcomes == {}
    report = night.close_night(archive, _synthetic(1000, 2000))
    assert set(report["games"]["crazy_cultists"]["tests"]) == {"score", "welch"}


def test_a_night_states_the_smallest_change_it_could_catch_and_it_shrinks_with_games():
    """Seat 0 unchanged at 50 % on independent seeds: nothing drifts, and the MDE of the seat
    rate halves with four times the games (never below the practical 2 points)."""
    small = compare_nights(_synthetic(500, 1000, seed=0), _synthetic(500, 1000, seed=5000))
    large = compare_nights(_synthetic(2000, 4000, seed=0), _synthetic(2000, 4000, seed=9000))
    (row_small,) = [
        m for m in small["games"]["crazy_cultists"]["metrics"] if m["metric"] == "seat 0 win rate"
    ]
    (row_large,) = [
        m for m in large["games"]["crazy_cultists"]["metrics"] if m["metric"] == "seat 0 win rate"
    ]
    assert not row_small["drifted"] and row_small["p_adjusted"] >= row_small["p"]
    assert row_small["mde"] > 0.02 and abs(row_large["mde"] / row_small["mde"] - 0.5) < 0.05
