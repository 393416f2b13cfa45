"""Teams are part of the game spec (issue 16): every consumer reads partnerships from there."""

from __future__ import annotations

from services.balance.sweeps import units
from services.engines.core.ladder import slot_seats
from services.engines.registry import available_games, load_game


def test_tricky_cultists_partners_sit_opposite():
    spec = load_game("tricky_cultists")
    assert spec.team_seats(4) == [[0, 2], [1, 3]]  # TK-2
    assert spec.has_partners(4)
    assert slot_seats(spec, 4) == spec.team_seats(4)  # the ladder rotates partnerships
    assert units.win_units(spec, 4) == [("team 0", [0, 2]), ("team 1", [1, 3])]
    assert units.tested_units(spec, 4) == [("team 0", [0, 2])]  # team 1 is its mirror


def test_free_for_all_games_have_one_seat_per_team():
    for game in available_games():
        spec = load_game(game)
        if game == "tricky_cultists":
            continue
        for n in range(spec.min_players, spec.max_players + 1):
            assert spec.team_seats(n) == [[s] for s in range(n)] and not spec.has_partners(n)
            tested = units.tested_units(spec, n)
            assert tested == (units.win_units(spec, n)[:1] if n == 2 else units.win_units(spec, n))
