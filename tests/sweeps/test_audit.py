"""The audited report statistics: teams as the unit, one BH family, paired variant comparisons."""

from __future__ import annotations

import pytest

from services.balance.sweeps.aggregate import aggregate
from services.balance.sweeps.paired import base_cells, blocks_of, compare_with_base, count_blocks
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.summary import add_paired

TWO = {"two_players": True}  # Crazy Cultists seats 2 only as CC-2's sweep variant


def _result(cell: int, start: int, winners: list[list[int]], facts: list | None = None) -> dict:
    n = len(winners)
    return {"chunk": f"{cell}-{start}", "cell": cell, "start": start, "games": n, "winners": winners,
            "turns": [20] * n, "decisions": [50] * n, "capped": [0] * n, "facts": facts or []}  # fmt: skip


def test_partners_are_one_unit_in_tricky_cultists():
    # TK-2: seats 0+2 against 1+3. Team 0 wins 110 of 200 games: chi-square on the games
    # is (110-100)²/100 + (90-100)²/100 = 2.0. Counting each partner as its own trial (the
    # old seat test) would give 4.0 and a p-value that is too small.
    spec = parse_spec({"game": "tricky_cultists", "games": 200, "chunk": 200})
    winners = [[0, 2] if g < 110 else [1, 3] for g in range(200)]
    facts = [{"groups": {"team": ["team 0", "team 1"] * 2}, "played": {}} for _ in range(200)]
    (cell,) = aggregate(spec, [_result(0, 0, winners, facts)])["cells"]
    assert set(cell["tests"]) == {"team"}  # no seat test, no second "team" group test
    assert cell["tests"]["team"]["chi2"] == pytest.approx(2.0) and cell["tests"]["team"]["df"] == 1
    assert [(t["seats"], t["wins"], t["trials"]) for t in cell["teams"]] == [
        ([0, 2], 110, 200),
        ([1, 3], 90, 200),
    ]
    assert cell["groups"]["team"][0]["wins"] == 220  # the group table still shows seat-games


def test_significant_means_flagged_after_bh():
    # Cell 1's seat 0 wins 114 of 200 (p = 0.048 alone, its interval misses 1/2), cell 0 is
    # exactly fair: in one family of two the adjusted p is 0.096, so nothing is significant
    # though the interval says "outside".
    spec = parse_spec({"game": "crazy_cultists", "games": 200, "players": [2], "chunk": 200, "config": TWO,
                       "grid": {"variant": ["base", "beast"]}})  # fmt: skip
    fair = [[g % 2] for g in range(200)]
    leaning = [[0] if g < 114 else [1] for g in range(200)]
    agg = aggregate(spec, [_result(0, 0, fair), _result(1, 0, leaning)])
    cell = agg["cells"][1]
    assert cell["seats"][0]["outside"] is True
    assert cell["tests"]["seat"]["p"] < 0.05 < cell["tests"]["seat"]["p_adj"]
    assert cell["first_seat_advantage"]["significant"] is False and not cell["flagged"]
    assert cell["first_seat_advantage"]["p_adj"] == cell["tests"]["seat"]["p_adj"]
    assert agg["tests"]["family_size"] == 2 and agg["tests"]["flagged"] == []


def test_each_cell_against_its_base_on_the_same_seeds():
    spec = parse_spec({"game": "crazy_cultists", "games": 400, "players": [2, 3], "chunk": 400, "config": TWO,
                       "grid": {"variant": ["base", "beast"]}})  # fmt: skip
    cells = spec.cells()
    assert base_cells(spec) == {2: 0, 3: 1}  # beast 2p -> base 2p, beast 3p -> base 3p
    base2 = [[g % 2] for g in range(400)]
    # beast 2p: the same games, except 40 that seat 1 won now go to seat 0 (+10 points).
    beast2 = [[0] if (g % 2 == 0 or g % 10 == 1) else [1] for g in range(400)]
    three = [[g % 3] for g in range(400)]
    results = [_result(0, 0, base2), _result(1, 0, three), _result(2, 0, beast2), _result(3, 0, three)]
    rows = compare_with_base(spec, count_blocks(spec, blocks_of(results)))
    two = [r for r in rows if r["cell"] == 2]
    # Two seats: seat 1 is its mirror. Every game lasts 20 turns in both cells.
    assert [r["metric"] for r in two] == ["seat 0 win rate", "mean game length (turns)"]
    row, length = two
    assert (length["difference"], length["p"], length["test"]) == (0, 1.0, "paired-t")
    assert (row["base"], row["value"], row["difference"]) == (0.5, 0.6, pytest.approx(0.1))
    assert row["lo"] < 0.1 < row["hi"] and row["hi"] - row["lo"] < 0.07  # paired: narrow
    assert row["test"] == "mcnemar" and row["p"] < 1e-6
    three_rows = [r for r in rows if r["cell"] == 3]
    assert [r["metric"] for r in three_rows] == [f"seat {s} win rate" for s in range(3)] + [
        "mean game length (turns)"
    ]
    assert all(r["difference"] == 0 and r["p"] == 1.0 for r in three_rows)

    agg = aggregate(spec, results)
    add_paired(spec, agg, count_blocks(spec, blocks_of(results)))
    # One family: the four cells' seat tests and the six paired comparisons.
    assert agg["tests"]["family_size"] == 10 and agg["tests"]["paired_in_family"] == 6
    (sig,) = [r for r in agg["paired"] if r["significant"]]
    assert sig["p_adj"] <= 0.05 and {"cell": 2, "test": "paired: seat 0 win rate", "p": sig["p"],
                                      "p_adj": sig["p_adj"]} in agg["tests"]["flagged"]  # fmt: skip
    assert sig["sentence"].startswith(
        "seat 0 wins 10.0 points more often under `variant=beast` than under variant=base (60.0% against 50.0%, 2p)"
    )
    assert "95% interval" in sig["sentence"] and cells[2].label == sig["label"]


def test_cult_wins_are_compared_per_game():
    spec = parse_spec({"game": "trash_cult", "games": 100, "players": [2], "chunk": 100,
                       "grid": [{}, {"max_turns": 90}]})  # fmt: skip
    facts = [{"groups": {"cult": ["Rat", "Skunk"]}, "played": {}} for _ in range(100)]
    base = [[0] if g < 50 else [1] for g in range(100)]
    other = [[0] if g < 80 else [1] for g in range(100)]
    rows = compare_with_base(
        spec, count_blocks(spec, blocks_of([_result(0, 0, base, facts), _result(1, 0, other, facts)]))
    )
    by_metric = {r["metric"]: r for r in rows}
    assert by_metric["cult Rat wins (share of games)"]["difference"] == pytest.approx(0.3)
    assert by_metric["cult Rat wins (share of games)"]["who"] == "the Rat cult"
    assert by_metric["cult Rat wins (share of games)"]["test"] == "mcnemar"  # 30 discordant games


def test_card_play_rates_are_compared_per_game():
    spec = parse_spec({"game": "trash_cult", "games": 100, "players": [2], "chunk": 100,
                       "grid": [{}, {"max_turns": 90}]})  # fmt: skip
    winners = [[g % 2] for g in range(100)]
    # Hide is played in games 0-39 under the base rules, in games 0-69 under the variant.
    base = [{"groups": {}, "played": {"Hide": [0]} if g < 40 else {}} for g in range(100)]
    other = [{"groups": {}, "played": {"Hide": [1]} if g < 70 else {}} for g in range(100)]
    counts = count_blocks(spec, blocks_of([_result(0, 0, winners, base), _result(1, 0, winners, other)]))
    assert counts[1].tables[("played", "Hide")] == [0, 30, 40]  # base only, variant only, both
    agg = aggregate(spec, [_result(0, 0, winners, base), _result(1, 0, winners, other)])
    add_paired(spec, agg, counts)
    row = next(r for r in agg["paired"] if r["kind"] == "played")
    assert (row["metric"], row["base"], row["value"]) == ("Hide play rate (share of games)", 0.4, 0.7)
    assert row["test"] == "mcnemar" and row["significant"]
    assert row["sentence"].startswith(
        "Hide is played in a game 30.0 points more often under `max_turns=90` than under base"
    )


def _reference_rows(spec, results) -> list[dict]:
    """The paired rows computed the plain way: every game of every cell in memory, by seed,
    each comparison from its full lists of per-game outcomes (no bit masks, no blocks)."""
    from services.balance.sweeps.plan import game_seed
    from services.balance.sweeps.units import tested_units
    from services.engines.core.stats import paired_means, paired_rates_from

    games = {}  # (cell, seed) -> (winning seats, turns, groups, cards played)
    for res in results:
        for k in range(res["games"]):
            fact = res["facts"][k]
            games[(res["cell"], game_seed(spec, res["start"] + k))] = (
                set(res["winners"][k]), res["turns"][k], fact["groups"], set(fact["played"]))  # fmt: skip

    def group_won(game, name, label) -> bool:
        labels = game[2].get(name, [])
        return any(s < len(labels) and labels[s] == label for s in game[0])

    rows = []
    for index, base_index in base_cells(spec).items():
        common = sorted({s for c, s in games if c == index} & {s for c, s in games if c == base_index})
        a, b = [games[(base_index, s)] for s in common], [games[(index, s)] for s in common]
        comps = [(n, paired_rates_from([bool(g[0] & set(seats)) for g in a], [bool(g[0] & set(seats)) for g in b]))
                 for n, seats in tested_units(spec.game_spec, 2)]  # fmt: skip
        for name in sorted({n for g in a + b for n in g[2]} - {"partnership", "team"}):
            for label in sorted({lab for g in a + b for lab in g[2].get(name, [])}):
                comps.append((label, paired_rates_from([group_won(g, name, label) for g in a],
                                                       [group_won(g, name, label) for g in b])))  # fmt: skip
        for card in sorted({c for g in a + b for c in g[3]}):
            comps.append((card, paired_rates_from([card in g[3] for g in a], [card in g[3] for g in b])))
        comps.append(("length", paired_means([g[1] for g in a], [g[1] for g in b])))
        rows += [(index, c.before, c.after, c.difference, c.lo, c.hi, c.p, c.test, c.n) for _n, c in comps]
    return rows


def test_streamed_paired_counts_equal_all_games_at_once():
    # A real small sweep: Trash Cult, cults and cards in the facts, four blocks of seeds.
    import random

    from services.balance.sweeps.local import simulate_local

    spec = parse_spec({"game": "trash_cult", "seed": 11, "games": 32, "players": [2], "chunk": 8,
                       "grid": [{}, {"max_turns": 40}, {"hand_size": 7}]})  # fmt: skip
    results = simulate_local(spec, processes=1)
    # Blocks folded one at a time, in a shuffled order, merged in another grouping.
    blocks = blocks_of(results)
    random.Random(5).shuffle(blocks)
    halves = [count_blocks(spec, blocks[:1]), count_blocks(spec, blocks[1:])]
    streamed = {i: halves[1][i].merge(halves[0][i]) for i in halves[0]}
    rows = compare_with_base(spec, streamed)
    assert rows == compare_with_base(spec, count_blocks(spec, blocks_of(results)))
    got = [(r["cell"], r["base"], r["value"], r["difference"], r["lo"], r["hi"], r["p"], r["test"], r["games"])
           for r in rows]  # fmt: skip
    want = [(i, *(round(x, 6) for x in (b, a, d, lo, hi)), p, t, n) for i, b, a, d, lo, hi, p, t, n in _reference_rows(spec, results)]  # fmt: skip
    assert len(got) == len(want) and {r["kind"] for r in rows} == {"wins", "played", "turns"}
    for g, w in zip(got, want, strict=True):
        assert g[:6] == w[:6] and g[7:] == w[7:] and g[6] == pytest.approx(w[6], rel=1e-12)
