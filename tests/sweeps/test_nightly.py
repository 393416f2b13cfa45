"""The nightly suite's shape and the drift comparison on fixed summaries."""

from __future__ import annotations

import copy

from services.engines.registry import available_games, load_game
from workers.sweeps.aggregate import aggregate
from workers.sweeps.nightly import compare, standard_suite, variant_grid
from workers.sweeps.spec import parse_spec


def _summary(seat0_wins: int, games: int = 200) -> dict:
    spec = parse_spec(
        {
            "game": "crazy_cultists",
            "config": {"two_players": True},
            "games": games,
            "players": [2],
            "chunk": games,
        }
    )
    winners = [[0] if g < seat0_wins else [1] for g in range(games)]
    result = {"chunk": "0-0", "cell": 0, "start": 0, "games": games, "winners": winners,
              "turns": [20] * games, "decisions": [60] * games, "capped": [0] * games, "facts": []}  # fmt: skip
    return {"sweep": f"s{seat0_wins}", "aggregates": aggregate(spec, [result])}


def test_unchanged_numbers_do_not_drift():
    night = _summary(100)
    drift = compare(night, copy.deepcopy(night))
    assert drift["drifted"] == [] and drift["compared"] > 0 and drift["previous_sweep"] == "s100"


def test_a_move_beyond_the_interval_is_reported():
    # seat 0: 100/200 last night, interval about [0.43, 0.57]; tonight 0.65 is outside.
    drift = compare(_summary(100), _summary(130))
    moved = {d["metric"]: d for d in drift["drifted"]}
    assert set(moved) == {"seat 0 win rate", "seat 1 win rate"}
    seat0 = moved["seat 0 win rate"]
    assert (seat0["previous"], seat0["tonight"], seat0["delta"]) == (0.5, 0.65, 0.15)
    assert seat0["interval"][0] < 0.5 < seat0["interval"][1] < 0.65
    # a small move stays inside the interval
    assert compare(_summary(100), _summary(108))["drifted"] == []


def test_cells_are_matched_by_label():
    tonight = _summary(100)
    tonight["aggregates"]["cells"][0]["label"] = "something new"
    drift = compare(_summary(100), tonight)
    assert drift["compared"] == 0 and drift["new_cells"] == ["something new"]


def test_standard_suite_covers_games_variants_and_player_counts():
    suite = {s.game: s for s in standard_suite(games=10, seed=1)}
    assert set(suite) == set(available_games())
    for game, spec in suite.items():
        gspec = load_game(game)
        assert spec.players == tuple(range(gspec.min_players, gspec.max_players + 1))
        assert spec.grid[0] == {} and list(spec.grid) == variant_grid(game)
        assert spec.lineups == ("heuristic",)
    if "crazy_cultists" in suite:
        grid = variant_grid("crazy_cultists")
        assert {"variant": "fiendish"} in grid and {"dark_powers": True} in grid
        assert {"variant": "base"} not in grid  # the default is the base cell
        assert suite["crazy_cultists"].config == {"two_players": True}  # CC-2: its 2-player cells
