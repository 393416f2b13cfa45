"""Report hygiene (docs/sweeps.md): the homogeneity test's size under the null, a cell flagged
by its paired comparisons, the verdict line, skipped cells, and local replay links."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from services.balance.sweeps.aggregate import game_rows
from services.balance.sweeps.homogeneity import homogeneity_test, stratum_key
from services.balance.sweeps.local import run_local
from services.balance.sweeps.plan import chunks
from services.balance.sweeps.report import write_report
from services.balance.sweeps.significance import apply_family
from services.balance.sweeps.spec import parse_spec, parse_stored_spec
from services.engines.core.stats import chi_square_gof

CULTS = ("Raccoon", "Skunk", "Squirrel", "Rat")
CELLS = 1500  # simulated null cells per table size: the rejection rate to about +-1.1 points


def _null_cell(rng: random.Random, players: int, games: int, seat_edge: float) -> tuple[dict, dict, dict]:
    """One cell under the null "the cult does not matter": each game deals distinct cults
    at random, seat 0 wins with an edge (seats may differ), a few games are draws."""
    strata: dict[str, int] = {}
    wins = dict.fromkeys(CULTS, 0)
    apps = dict.fromkeys(CULTS, 0)
    for _ in range(games):
        cults = rng.sample(CULTS, players)
        if rng.random() < 0.03:
            winner = None
        elif rng.random() < seat_edge:
            winner = 0
        else:
            winner = rng.randrange(players)
        key = stratum_key(cults, 0 if winner is None else 1)
        strata[key] = strata.get(key, 0) + 1
        for s, cult in enumerate(cults):
            apps[cult] += 1
            wins[cult] += s == winner
    return strata, wins, apps


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_cult_test_rejects_five_percent_of_null_cells(players: int) -> None:
    """Null simulation: the stratified homogeneity test rejects 3-7 % at the 5 % level,
    where the older wins-only goodness-of-fit test rejected far fewer at 2 players."""
    rng = random.Random(players)
    rejected = old_rejected = 0
    for _ in range(CELLS):
        strata, wins, apps = _null_cell(rng, players, 300, seat_edge=0.1)
        test = homogeneity_test(strata, wins)
        assert test["df"] == len(CULTS) - 1
        rejected += test["p"] < 0.05
        total_w, total_a = sum(wins.values()), sum(apps.values())
        _chi2, _df, p = chi_square_gof([wins[c] for c in CULTS], [apps[c] * total_w / total_a for c in CULTS])
        old_rejected += p < 0.05
    assert 0.03 <= rejected / CELLS <= 0.07, rejected / CELLS
    if players == 2:
        assert old_rejected / CELLS < 0.02  # the bug the issue found: 0.6 % at 2 players


def test_the_cult_test_finds_a_strong_cult() -> None:
    rng = random.Random(9)
    strata: dict[str, int] = {}
    wins = dict.fromkeys(CULTS, 0)
    for _ in range(400):
        cults = rng.sample(CULTS, 2)
        winner = cults.index("Rat") if "Rat" in cults and rng.random() < 0.7 else rng.randrange(2)
        strata[stratum_key(cults, 1)] = strata.get(stratum_key(cults, 1), 0) + 1
        wins[cults[winner]] += 1
    assert homogeneity_test(strata, wins)["p"] < 1e-4


def _aggregates(paired_p: float) -> dict:
    """One cell with an unremarkable seat test, and one paired comparison of it."""
    cell = {
        "cell": 1, "label": "donuts=9 | 2p | heuristic x2", "fair_share": 0.5, "games": 400,
        "seats": [{"seat": 0, "rate": 0.51, "delta": 0.01}, {"seat": 1, "rate": 0.49, "delta": -0.01}],
        "teams": [], "groups": {},
        "first_seat_advantage": {}, "tests": {"seat": {"chi2": 0.2, "df": 1, "p": 0.65, "balance": True}},
    }  # fmt: skip
    row = {"cell": 1, "label": cell["label"], "variant": "donuts=9", "players": 2, "base_cell": 0,
           "base_variant": "base", "metric": "cult Rat wins (share of games)", "kind": "wins",
           "who": "the Rat cult", "games": 400, "base": 0.463, "value": 0.389, "difference": -0.074,
           "lo": -0.11, "hi": -0.04, "p": paired_p, "test": "mcnemar", "discordant": 0.2}  # fmt: skip
    return {"cells": [cell], "paired": [row]}


def test_a_cell_is_flagged_by_its_significant_paired_comparison_and_the_verdict_names_it() -> None:
    agg = _aggregates(paired_p=1e-6)
    apply_family(agg)
    (cell,) = agg["cells"]
    assert cell["tests"]["seat"]["flag"] is False
    assert cell["flagged"] and cell["flags"] == ["paired: cult Rat wins (share of games)"]
    assert agg["verdict"].startswith("Largest significant effect: The Rat cult wins 7.4 points less often")
    quiet = _aggregates(paired_p=0.4)
    apply_family(quiet)
    assert not quiet["cells"][0]["flagged"]
    assert quiet["verdict"].startswith("No significant effect: none of the 2 tests")


def test_every_test_states_its_smallest_detectable_effect() -> None:
    agg = _aggregates(paired_p=0.4)
    apply_family(agg)
    seat_mde = agg["cells"][0]["tests"]["seat"]["mde"]
    paired_mde = agg["paired"][0]["mde"]
    # 400 games at a fair share of 1/2, two tests at q = 0.05 (a lone effect needs p <= 0.025)
    assert 0.07 < seat_mde < 0.08 and 0.05 < paired_mde < 0.07
    metrics = {m["metric"]: m for m in agg["power"]["by_metric"]}
    assert metrics["paired: win rate"]["mde"] == paired_mde and agg["power"]["level"] == 0.025


SKIPPING = {"game": "trash_cult", "seed": 3, "games": 4, "players": [2, 4], "chunk": 4, "lineups": ["heuristic"],
            "grid": [{}, {"food_needed_4p": 5}]}  # fmt: skip


def test_a_cell_whose_override_cannot_change_its_game_is_skipped_and_plays_nothing(tmp_path: Path) -> None:
    spec = parse_spec(SKIPPING)
    by_label = {c.label: c for c in spec.cells()}
    skipped = by_label["food_needed_4p=5 | 2p | heuristic x2"]
    assert skipped.skipped is not None and "food_needed_4p does not change a 2-player game" in skipped.skipped
    assert by_label["food_needed_4p=5 | 4p | heuristic x4"].skipped is None
    assert skipped.index not in {c.cell for c in chunks(spec)}
    assert spec.total_games == 3 * 4
    summary, replays, results = run_local(spec, processes=1)
    agg = summary["aggregates"]
    assert agg["games_counted"] == 12 and [s["cell"] for s in agg["skipped_cells"]] == [skipped.index]
    cell = agg["cells"][skipped.index]
    assert cell["games"] == 0 and cell["tests"] == {} and not cell["flagged"]
    assert all(row["cell"] != skipped.index for row in agg["paired"])
    page = write_report(tmp_path, summary, game_rows(spec, results), replays).read_text()
    assert "Skipped cells" in page and "food_needed_4p does not change a 2-player game" in page
    # A stored spec from before skipped cells planned every cell, and still does.
    stored = {k: v for k, v in spec.to_dict().items() if k != "skip_unchanged"}
    assert all(c.skipped is None for c in parse_stored_spec(stored).cells())


def test_a_local_report_opens_with_its_verdict_and_its_replay_links_work_from_the_file(
    tmp_path: Path,
) -> None:
    spec = parse_spec({"game": "trash_cult", "seed": 8, "games": 3, "players": [2], "chunk": 3})
    summary, replays, results = run_local(spec, processes=1)
    page = write_report(tmp_path, summary, game_rows(spec, results), replays)
    html = page.read_text()
    assert html.index("class=verdict") < html.index("<h2>")
    assert 'href="replays/cell-0.html"' in html and 'href="/replay?' not in html
    moves = (tmp_path / "replays" / "cell-0.html").read_text()
    record = replays[0]
    assert f"seed {record['seed']}" in moves and moves.count("<tr>") == len(record["actions"]) + 1
    assert 'href="cell-0.json"' in moves and (tmp_path / "replays" / "cell-0.json").exists()


def _variants_aggregates() -> dict:
    names = ["base", "variant=devilish dark_powers=true optional_setup=true threshold=12",
             "variant=fiendish dark_powers=true optional_setup=true threshold=14 candles_to_win=6"]  # fmt: skip
    variants, cells = [], []
    for i, name in enumerate(names):
        for players in (3, 5):
            seats = [{"seat": s, "delta": 0.01 * (s - i), "rate": 0.3, "outside": s == 0 and i == 1}
                     for s in range(players)]  # fmt: skip
            variants.append({"variant": name, "players": players, "seats": seats})
            cells.append({"variant": name, "players": players, "seats": seats, "teams": [],
                          "tests": {"seat": {"flag": i == 1 and players == 3}}})  # fmt: skip
    paired = [{"variant": names[2], "players": 5, "metric": "seat 4 win rate", "significant": True},
              {"variant": names[2], "players": 5, "metric": "seat 1 win rate", "significant": False}]  # fmt: skip
    return {"variants": variants, "cells": cells, "paired": paired}


def test_the_heatmap_marks_significant_seats_and_its_labels_do_not_overlap() -> None:
    from services.balance.sweeps.plots import heatmap_figure, significant_seats

    agg = _variants_aggregates()
    names = sorted({v["variant"] for v in agg["variants"]})
    marked = significant_seats(agg)
    assert marked == {(names[1], 3, 0), (names[2], 5, 4)}
    fig = heatmap_figure(agg)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        if not ax.get_images():
            continue  # a colorbar
        texts = [t for t in ax.texts if t.get_text()]
        assert sum(t.get_text().endswith("*") for t in texts) == sum(
            1 for m in marked if m[1] == len(ax.get_xticks())
        )
        boxes += [t.get_window_extent(renderer) for t in ax.get_yticklabels() if t.get_text()]
        boxes.append(ax.get_window_extent(renderer))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b) or a is b, "labels overlap each other or another panel"
