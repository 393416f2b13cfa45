"""Per-game records: Parquet partitioned by cell, looked up by seed; per-cell outcomes by seed."""

from __future__ import annotations

import time

import pytest

from services.balance.sweeps import records
from services.balance.sweeps.aggregate import game_rows
from services.balance.sweeps.local import run_local, simulate_local
from services.balance.sweeps.report import write_report
from services.balance.sweeps.spec import parse_spec

from .support import SMALL_SPECS


def test_parquet_records_find_every_cells_game_by_seed(tmp_path):
    spec = parse_spec(SMALL_SPECS["trash_cult"])  # 2 cells (2p, 4p) x 16 games, facts columns
    summary, replays, results = run_local(spec, processes=1)
    write_report(tmp_path / "r", summary, game_rows(spec, results), replays)
    games = tmp_path / "r" / "games"
    assert sorted(p.name for p in games.iterdir()) == ["cell=0", "cell=1"]
    assert (tmp_path / "r" / "games.csv").exists()  # small: the CSV is there too
    seed = spec.seed + 5
    found = records.find_games(games, seed)
    assert [r["cell"] for r in found] == [0, 1]
    for row in found:
        by_seed = records.outcomes_by_seed(spec, results, row["cell"])
        assert len(by_seed) == spec.games
        assert row["winners"] == by_seed[seed]
        assert row["game_index"] == 5 and len(row["bots"]) == spec.cells()[row["cell"]].players
        assert row["cult_by_seat"]
    assert records.find_games(games, seed, cell=1)[0]["players"] == 4
    assert records.find_games(games, spec.seed + spec.games) == []  # no such game

    (tmp_path / "big").mkdir()
    assert records.write_game_records(tmp_path / "big", game_rows(spec, results), csv_too=False) == 32
    assert not (tmp_path / "big" / "games.csv").exists()  # a big sweep: Parquet only
    assert len(records.find_games(tmp_path / "big" / "games", seed)) == 2


def test_two_cells_pair_on_the_same_seeds(tmp_path):
    spec = parse_spec(SMALL_SPECS["crazy_cultists"])
    _summary, _replays, results = run_local(spec, processes=1)
    a = records.outcomes_by_seed(spec, iter(results), 0)
    b = records.outcomes_by_seed(spec, iter(results), 1)
    assert set(a) == set(b) == set(range(spec.seed, spec.seed + spec.games))


def test_sweep_records_replace_whole_and_expire(tmp_path):
    spec = parse_spec({"game": "crazy_cultists", "seed": 5, "games": 16, "players": [3, 4], "chunk": 8})
    results = simulate_local(spec, processes=1)
    root = tmp_path / "records"
    info = {"game": spec.game}
    written = records.write_sweep_records(root, "abc123", game_rows(spec, results), info)
    assert written == {"path": str(root / "abc123"), "games": 32}
    # A second finish of the same sweep (a finisher killed mid-way) replaces, never adds.
    records.write_sweep_records(root, "abc123", game_rows(spec, results), info)
    assert len(records.find_sweep_games(root, "abc123", spec.seed + 3)) == 2
    assert len(list((root / "abc123" / "games").rglob("*.parquet"))) == 2
    assert [p.name for p in root.iterdir()] == ["abc123"]  # no temporary folder left
    with pytest.raises(ValueError, match="bad sweep id"):
        records.write_sweep_records(root, "../x", game_rows(spec, results), info)
    with pytest.raises(FileNotFoundError, match="no per-game records of sweep nope"):
        records.find_sweep_games(root, "nope", spec.seed)
    # Retention: kept while younger than the setting, deleted after.
    assert records.prune_records(root, keep_seconds=3600) == []
    assert records.prune_records(root, keep_seconds=3600, now=time.time() + 7200) == ["abc123"]
    assert not (root / "abc123").exists()


def test_many_cells_buffer_a_bounded_number_of_rows(tmp_path, monkeypatch):
    # Every cell fills at once (chunks stream in any order): past the cap the fullest
    # cell is written out, so memory holds ROWS_BUFFERED rows, not cells x ROWS_PER_PART.
    monkeypatch.setattr(records, "ROWS_BUFFERED", 5)
    rows = [
        {"cell": c, "seed": s, "winners": "0", "bots": "a;b", "turns": 3} for s in range(7) for c in range(3)
    ]
    writer = records._PartWriter(tmp_path / "games")
    for row in rows:
        writer.add(records._parquet_row(row))
        assert writer.buffered < 5
    writer.close()
    assert len(list((tmp_path / "games").rglob("*.parquet"))) > 3
    assert [r["cell"] for r in records.find_games(tmp_path / "games", 4)] == [0, 1, 2]


def test_a_first_part_of_draws_only_does_not_refuse_the_winners_after_it(tmp_path):
    """The first Parquet part fixes every part's schema: a cell whose games were all draws
    (winners only empty lists) must not make the next cell's winning seats unwritable."""
    base = {"variant": "base", "players": 2, "decisions": 10, "capped": 1, "bots": "random;random"}
    rows = [{**base, "cell": 0, "game_index": i, "seed": i, "winners": "", "turns": 60} for i in range(3)]
    rows += [{**base, "cell": 1, "game_index": i, "seed": i, "winners": "1", "turns": 20, "capped": 0}
             for i in range(3)]  # fmt: skip
    assert records.write_game_records(tmp_path, rows, csv_too=False) == 6
    (row,) = records.find_games(tmp_path / "games", 2, cell=1)
    assert list(row["winners"]) == [1]
