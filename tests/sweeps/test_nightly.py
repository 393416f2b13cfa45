"""The nightly suite's shape (the drift comparison is tested in test_drift.py)."""

from __future__ import annotations

from services.balance.sweeps.nightly import standard_suite, variant_grid
from services.engines.registry import available_games, load_game


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


def test_each_game_has_its_own_default_size_unless_one_is_given(monkeypatch):
    """Chosen from the bench's power table (docs/sweeps.md, "The size of a night")."""
    from services.balance.sweeps.nightly import DEFAULT_GAMES, DEFAULT_GAMES_BY_GAME

    monkeypatch.delenv("NIGHTLY_GAMES", raising=False)
    sizes = {s.game: s.games for s in standard_suite(seed=1)}
    assert sizes == {g: DEFAULT_GAMES_BY_GAME.get(g, DEFAULT_GAMES) for g in available_games()}
    assert sizes["trash_cult"] > DEFAULT_GAMES == sizes["crazy_cultists"]
    assert {s.games for s in standard_suite(games=30, seed=1)} == {30}
    monkeypatch.setenv("NIGHTLY_GAMES", "50")
    assert {s.games for s in standard_suite(seed=1)} == {50}
    # A new night deals keyed: a deck change pairs with the night before on the same seeds.
    assert {s.shuffle for s in standard_suite(seed=1)} == {"keyed"}
