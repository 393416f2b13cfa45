"""Specs are refused with a clear message before anything runs; plans pair seeds and rotate seats."""

from __future__ import annotations

from collections import Counter

import pytest

from services.balance.sweeps.plan import chunk_by_id, chunks, game_seed
from services.balance.sweeps.spec import SpecError, parse_spec

BASE = {"game": "crazy_cultists", "games": 12, "seed": 3}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"game": "chess"}, "'game': unknown game 'chess'; games: crazy_cultists"),
        ({"config": {"candles": 3}}, "unknown config field(s) candles"),
        ({"grid": {"nope": [1, 2]}}, "unknown config field(s) nope"),
        ({"games": 0}, "'games': input should be greater than or equal to 1"),
        ({"games": "many"}, "'games': input should be a valid integer"),
        ({"lineups": ["genius"]}, "bad bot 'genius'"),
        ({"lineups": [["heuristic", "random"]], "players": [4]}, "names 2 bots"),
        ({"lineups": ["ismcts:ms=50"]}, "wall-clock"),
        ({"players": [9]}, "takes 2-6 players, not 9"),
        ({"players": [2, 3]}, "2p | random x2': Crazy Cultists takes 3-6 players"),  # CC-2
        ({"config": {"variant": "lunar"}}, "cell 'base | 4p"),
        ({"grid": {"variant": []}}, "'grid.variant': list should have at least 1 item"),
        ({"seeds": 4}, "'seeds' is not a field here"),
    ],
)
def test_bad_specs_are_refused_with_a_clear_message(change, message):
    with pytest.raises(SpecError) as err:
        parse_spec({**BASE, **change})
    assert message in str(err.value)


def test_two_players_with_the_cc2_switch_is_a_valid_spec():
    spec = parse_spec({**BASE, "players": [2, 3], "config": {"two_players": True}})
    assert {c.players for c in spec.cells()} == {2, 3}


def test_a_cults_list_that_does_not_fit_every_player_count_is_refused():
    """TC-2's cults name one cult per seat, so [Rat, Raccoon] cannot seat 3 players."""
    spec = {"game": "trash_cult", "games": 4, "players": [2, 3], "config": {"cults": ["Rat", "Raccoon"]}}
    with pytest.raises(SpecError) as err:
        parse_spec(spec)
    assert "3p" in str(err.value) and "names 2 cults for 3 players" in str(err.value)
    assert len(parse_spec({**spec, "players": [2]}).cells()) == 1


def test_bad_bot_message_names_the_known_bots():
    with pytest.raises(SpecError, match="known: random, heuristic"):
        parse_spec({**BASE, "lineups": [{"hero": "genius", "field": "random"}]})


def test_not_a_mapping():
    with pytest.raises(SpecError, match="must be a mapping"):
        parse_spec(["crazy_cultists"])


def test_cells_are_the_product_of_grid_players_and_fitting_lineups():
    spec = parse_spec(
        {
            **BASE,
            "players": [3, 4],
            "grid": {"variant": ["base", "fiendish"], "dark_powers": [False, True]},
            "lineups": [
                "random",
                ["heuristic", "random", "random", "random"],
                {"hero": "heuristic", "field": "random"},
            ],
            "max_turns": 200,
        }
    )
    cells = spec.cells()
    # 4 variants x (3p: 2 fitting line-ups + 4p: 3) = 20
    assert len(cells) == 20
    assert all(c.overrides["max_turns"] == 200 for c in cells)
    assert cells[0].label == "variant=base dark_powers=false | 3p | random x3"
    assert {c.lineup for c in cells if c.players == 3} == {("random",) * 3, ("heuristic", "random", "random")}
    assert parse_spec(spec.to_dict()) == spec  # the normalised form round-trips


def test_seat_rotation_puts_every_bot_in_every_seat_equally():
    spec = parse_spec({**BASE, "players": [4], "lineups": [["heuristic", "random", "random", "random"]]})
    (cell,) = spec.cells()
    seats: Counter[tuple[int, str]] = Counter()
    for g in range(spec.games):  # 12 games = 3 full rotations
        for s, bot in enumerate(cell.seat_bots(g)):
            seats[s, bot] += 1
    assert all(seats[s, "heuristic"] == 3 for s in range(4))
    assert all(seats[s, "random"] == 9 for s in range(4))


def test_every_cell_uses_the_same_seed_blocks():
    spec = parse_spec({**BASE, "games": 25, "chunk": 10, "grid": {"variant": ["base", "beast"]}})
    plan = chunks(spec)
    assert len(plan) == 6  # 3 blocks x 2 cells
    by_cell: dict[int, list[tuple[int, int]]] = {}
    for chunk in plan:
        by_cell.setdefault(chunk.cell, []).append((chunk.start, chunk.games))
        assert chunk_by_id(spec, chunk.id) == chunk
    assert by_cell[0] == by_cell[1] == [(0, 10), (10, 10), (20, 5)]
    assert game_seed(spec, 0) == 3 and game_seed(spec, 24) == 27
    # block-major: block 0 of every cell first
    assert [c.id for c in plan[:2]] == ["0-0", "1-0"]
    with pytest.raises(ValueError):
        chunk_by_id(spec, "5-0")


def test_example_specs_are_valid():
    from pathlib import Path

    from services.balance.sweeps.spec import load_spec_file

    examples = sorted((Path(__file__).parents[2] / "examples" / "sweeps").glob("*.yaml"))
    assert examples
    for path in examples:
        assert load_spec_file(path).total_games > 0


def test_unreadable_spec_files(tmp_path):
    from services.balance.sweeps.spec import load_spec_file

    with pytest.raises(SpecError, match="cannot read"):
        load_spec_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("game: [unclosed")
    with pytest.raises(SpecError, match="not YAML or JSON"):
        load_spec_file(bad)


@pytest.mark.parametrize("field", ["chunk", "games", "max_turns"])
def test_a_count_past_its_bound_is_refused_naming_it(field):
    """A count too large for a stored spec (found by schemathesis: a 24-digit chunk reached
    the store and failed there with a 500) is refused when the spec is read."""
    with pytest.raises(SpecError, match=f"'{field}'"):
        parse_spec({"game": "trash_cult", "games": 10, field: 10**24})
