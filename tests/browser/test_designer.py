"""/designer in Chromium: reached from the site nav; tunes and sweeps with percentages that
move by themselves as their records in Redis move; a finished tune's report with its plots;
the nightly history per game with its drift flags and a uPlot chart of the seat win rates."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.balance.sweeps.drift import NightGame
from services.balance.sweeps.night import NightArchive
from services.balance.sweeps.store import SweepStore, key, new_id
from services.balance.tune.evaluate import LocalRunner
from services.balance.tune.report import render_plots
from services.balance.tune.run import run_tune
from services.balance.tune.spec import parse_tune_spec
from services.balance.tune.store import TuneStore
from tests.support.staff import act_as

from .support import sign_in_as

TINY = {
    "name": "designer page tune",
    "game": "crazy_cultists",
    "seed": 3,
    "players": [2],
    "config": {"two_players": True},
    "search": {"threshold": {"low": 9, "high": 11}},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.3, 0.7]}],
    "budget": 60,
    "racing": {"games": 20, "eta": 2, "rungs": 1, "batch": 3},
    "confirm": 20,
}
CELL_2P, CELL_3P = "base | 2p | heuristic x2", "base | 3p | heuristic x3"


def _night(archive: NightArchive, night_id: str, rates_2p: list[float], drifted: list[dict]) -> None:
    cells = [
        {"label": CELL_2P, "seats": [{"seat": i, "rate": r} for i, r in enumerate(rates_2p)]},
        {"label": CELL_3P, "seats": [{"seat": i, "rate": 1 / 3} for i in range(3)]},
    ]
    drift = {"games": {"crazy_cultists": {"compared": 12 if drifted else 0, "drifted": drifted}}}
    archive.save(
        night_id,
        {"crazy_cultists": NightGame("crazy_cultists", {"cells": cells}, {})},
        drift,
        {"games_per_cell": 400},
    )


@pytest.fixture()
def nights(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Three stored nights (the archive's own writer); the last moved seat 0 of the 2p table."""
    root = tmp_path / "nightly"
    monkeypatch.setenv("CULTISTS_NIGHTLY_DIR", str(root))
    archive = NightArchive(root)
    _night(archive, "20261128T020000000000Z", [0.55, 0.45], [])
    _night(archive, "20261129T020000000000Z", [0.551, 0.449], [])
    moved = {"cell": CELL_2P, "metric": "seat 0 win rate", "before": 0.551, "after": 0.61,
             "difference": 0.059, "p_adjusted": 0.0004}  # fmt: skip
    _night(archive, "20261130T020000000000Z", [0.61, 0.39], [moved])
    _night(archive, "20261130T030000000000Z-preview", [0.9, 0.1], [])  # a what-if: not history
    return root


def test_the_designer_page_follows_tunes_sweeps_and_nights(
    new_context, gateway_settings, nights, screenshots
):
    tunes = TuneStore.from_url(gateway_settings.redis_url)
    sweeps = SweepStore(tunes.r)
    # A tune still searching (its driver's progress is what the page reads) ...
    running = new_id()
    tunes.create(running, TINY, {"name": "still searching", "game": "crazy_cultists", "budget": 400})
    tunes.mark_running(running)
    tunes.update(running, spent=100, trials=3, phase="searching", best={"threshold": 10})
    # ... a finished one, with its summary and plots as its driver stores them ...
    finished = new_id()
    summary = run_tune(parse_tune_spec(TINY), LocalRunner(1), finished)
    tunes.create(finished, TINY, {"name": "finished tune", "game": "crazy_cultists", "budget": 60})
    tunes.save_summary(finished, summary, render_plots(summary))
    # ... and a sweep half played.
    sweep = new_id()
    sweeps.create(sweep, {"name": "one donut fewer", "game": "trash_cult", "games": 100}, 200, 4)
    sweeps.r.hset(key(sweep, "meta"), mapping={"games_done": 100, "status": "running"})
    try:
        _follow(new_context().new_page(), running, finished, sweep, summary, tunes, sweeps, screenshots)
    finally:  # nothing left "running" for another test's reconciler to pick up
        tunes.fail(running, "test over")
        sweeps.cancel(sweep)
        tunes.r.close()


def _follow(page, running, finished, sweep, summary, tunes, sweeps, screenshots) -> None:
    # Tunes, sweeps and nights are a designer's: as the guest every browser is, the page
    # says so (403) and shows nobody's sweeps.
    page.goto("/designer")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=designer-updated]').textContent"
        '.includes("403: sign in with a designer\'s account")'
    )
    assert page.get_by_test_id(f"sweep-percent-{sweep}").count() == 0
    sign_in_as(page, tunes.r, "designer")
    page.goto("/")
    page.get_by_test_id("nav-designer").click()
    page.wait_for_url("**/designer")
    assert page.get_by_test_id(f"tune-percent-{running}").get_attribute("data-percent") == "25"
    assert "25.0%" in page.get_by_test_id(f"tune-percent-{running}").inner_text()
    assert page.get_by_test_id(f"sweep-percent-{sweep}").get_attribute("data-percent") == "50"
    # Sweeps by the name their designer gave them; the id only in the cell's title.
    name_cell = page.get_by_test_id(f"sweep-{sweep}").locator("td").first
    assert name_cell.inner_text() == "one donut fewer" and name_cell.get_attribute("title") == sweep
    row = page.get_by_test_id(f"tune-{finished}")
    assert row.get_attribute("data-status") == "done"
    assert summary["best"]["confirmed"]["verdict"] in row.inner_text()

    # Progress moves without a reload.
    tunes.update(running, spent=300, trials=9)
    sweeps.r.hset(key(sweep, "meta"), "games_done", 150)
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=tune-percent-{running}]').dataset.percent === '75'"
    )
    page.wait_for_function(
        f"() => document.querySelector('[data-testid=sweep-percent-{sweep}]').dataset.percent === '75'"
    )

    # The nightly history: the latest real night's drift flag, and a chart of its nights.
    flags = page.get_by_test_id("drift-crazy_cultists")
    assert "seat 0 win rate 55.1% → 61.0%" in flags.inner_text()
    page.wait_for_function(
        "() => window.designerCharts.crazy_cultists && window.designerCharts.crazy_cultists.points === 3"
    )
    drawn = page.evaluate(
        "(({cell, seats, points}) => ({cell, seats, points}))(window.designerCharts.crazy_cultists)"
    )
    assert drawn == {"cell": CELL_2P, "seats": 2, "points": 3}  # the preview night left out
    assert page.locator("[data-testid=chart-crazy_cultists] canvas").count() == 1
    page.get_by_test_id("cell-crazy_cultists").select_option(CELL_3P)
    page.wait_for_function("() => window.designerCharts.crazy_cultists.seats === 3")
    page.screenshot(path=str(screenshots / "designer.png"), full_page=True)

    # The finished tune's report opens with its plots.
    page.get_by_test_id(f"tune-report-{finished}").click()
    page.wait_for_url(f"**/api/tunes/{finished}/report?read=*")  # a signed link: no session needed
    assert "Confirmation on fresh seeds" in page.content()
    images = page.locator("img")
    assert images.count() >= 2
    page.wait_for_function("() => [...document.images].every((i) => i.complete && i.naturalWidth > 0)")


def test_the_nightly_data_refuses_a_bad_count_and_reads_an_empty_folder(
    client, app, tmp_path, monkeypatch, nights
):
    act_as(client, app.extensions["cultists"].redis, "designer")  # the nights are a designer's
    bad = client.get("/designer/data/nightly?nights=0")
    assert bad.status_code == 400 and bad.get_json()["error"]["code"] == "malformed"
    assert client.get("/designer/data/nightly?nights=x").status_code == 400
    last_two = client.get("/designer/data/nightly?nights=2").get_json()["games"]["crazy_cultists"]
    assert [n["night"] for n in last_two["nights"]] == ["20261129T020000000000Z", "20261130T020000000000Z"]
    assert last_two["cells"][CELL_2P] == [[0.551, 0.61], [0.449, 0.39]]
    monkeypatch.setenv("CULTISTS_NIGHTLY_DIR", str(tmp_path / "none yet"))
    assert client.get("/designer/data/nightly").get_json()["games"] == {}
