"""Sweeps end to end through a real Celery worker on real Redis: counts, determinism,
`--local` agreement, idempotent redelivery, replays, the CLI, metrics and the nightly suite."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time

import orjson
import pytest
import yaml

from services.balance.sweeps import control
from services.balance.sweeps.aggregate import game_rows
from services.balance.sweeps.local import run_local
from services.balance.sweeps.reconcile import waiting_messages
from services.balance.sweeps.records import find_sweep_games
from services.balance.sweeps.simulate import unpack
from services.balance.sweeps.spec import parse_spec
from services.balance.sweeps.store import INDEX, NIGHTLY, new_id
from services.cli.main import main as cli
from services.engines.registry import available_games
from tests.support.celery_worker import ROOT

from .support import SMALL_SPECS, scrape, wait_for

pytestmark = pytest.mark.usefixtures("sweep_worker")
GAMES = available_games()


def _run(store, celery_app, spec_dict):
    spec = parse_spec(spec_dict)
    sweep_id = control.submit(spec, store, celery_app)
    assert wait_for(store, sweep_id) == "done", store.meta(sweep_id)
    return spec, sweep_id, store.summary(sweep_id)


@pytest.mark.parametrize("game", GAMES)
def test_small_sweep_of_each_game_counts_every_game_and_agrees_with_local(game, store, celery_app):
    spec, sweep_id, summary = _run(store, celery_app, SMALL_SPECS[game])
    agg = summary["aggregates"]
    assert agg["games_counted"] == agg["games_requested"] == spec.total_games
    assert sum(c["games"] for c in agg["cells"]) == spec.total_games
    assert all(c["games"] == spec.games for c in agg["cells"])
    p = control.progress(store, sweep_id)
    assert (p["games_done"], p["percent"], p["chunks_failed"]) == (spec.total_games, 100.0, 0)
    assert p["chunks_done"] == p["total_chunks"] == len(store.chunk_blobs(sweep_id))
    local_summary, _replays, _results = run_local(spec, processes=2)
    assert local_summary["aggregates"] == agg
    if game == "trash_cult":
        assert "cult" in agg["cells"][0]["groups"]
    if game == "tricky_cultists":
        assert set(agg["cells"][1]["groups"]) == {"team", "partnership"}
        assert agg["cells"][1]["bots"]


def test_same_spec_and_seed_give_the_same_aggregates(store, celery_app):
    _s, first_id, first = _run(store, celery_app, SMALL_SPECS["tricky_cultists"])
    _s, second_id, second = _run(store, celery_app, SMALL_SPECS["tricky_cultists"])
    assert first_id != second_id
    assert first["aggregates"] == second["aggregates"]
    other_seed = {**SMALL_SPECS["tricky_cultists"], "seed": 43}
    _s, _id, third = _run(store, celery_app, other_seed)
    assert third["aggregates"] != first["aggregates"]


def test_a_redelivered_chunk_counts_nothing_twice(sweep_worker, store, celery_app):
    """The same chunk message delivered again (what Redis does when a worker dies after
    storing a chunk but before acknowledging it) is played, found stored, and dropped."""
    spec = parse_spec({**SMALL_SPECS["tricky_cultists"], "lineups": ["random"]})  # 1 cell, 2 chunks
    sweep_id = new_id()
    store.create(sweep_id, spec.to_dict(), spec.total_games, 2)

    def send(chunk_id: str) -> None:
        celery_app.send_task(control.CHUNK_TASK, args=[sweep_id, chunk_id], queue=control.QUEUE)

    duplicates = ("cultists_sweep_chunks_total", (("game", "tricky_cultists"), ("outcome", "duplicate")))
    seen = scrape(sweep_worker.metrics_port).get(duplicates, 0.0)
    send("0-0")
    deadline = time.monotonic() + 30
    while store.meta(sweep_id)["chunks_done"] != "1":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    send("0-0")
    send("0-0")
    while scrape(sweep_worker.metrics_port).get(duplicates, 0.0) < seen + 2:
        assert time.monotonic() < deadline, "the redelivered chunks were not processed"
        time.sleep(0.1)
    meta = store.meta(sweep_id)
    assert (meta["games_done"], meta["chunks_done"], meta["status"]) == ("20", "1", "running")
    # The store itself refuses a second write of a chunk.
    assert store.store_chunk(sweep_id, "0-0", store.chunk_blobs(sweep_id)["0-0"], 20) == (False, 1)
    send("0-1")
    assert wait_for(store, sweep_id) == "done"
    summary = store.summary(sweep_id)
    assert summary["aggregates"]["games_counted"] == 40
    assert summary["aggregates"] == run_local(spec, processes=1)[0]["aggregates"]


def test_a_game_replayed_from_the_report_reproduces_winner_and_length(
    sweep_worker, store, celery_app, tmp_path, capsysbinary
):
    spec, sweep_id, summary = _run(store, celery_app, SMALL_SPECS["crazy_cultists"])
    # No report was asked for, yet the finish wrote every game's record, found by seed.
    assert summary["records"] == {"path": str(sweep_worker.records / sweep_id), "games": spec.total_games}
    first = summary["aggregates"]["cells"][1]["representative"]
    (found,) = find_sweep_games(sweep_worker.records, sweep_id, first["seed"], cell=1)
    assert (found["winners"], found["turns"], found["bots"]) == (
        first["winners"],
        first["turns"],
        first["bots"],
    )
    rows = {
        (r["cell"], r["seed"]): r
        for r in game_rows(spec, (unpack(b) for b in store.chunk_blobs(sweep_id).values()))
    }
    replays = store.replays(sweep_id)
    assert set(replays) == {c["cell"] for c in summary["aggregates"]["cells"]}
    for cell in summary["aggregates"]["cells"][:3]:
        rep = cell["representative"]
        record = replays[cell["cell"]]
        assert f"seed={rep['seed']}" in rep["replay_url"] and rep["replay_url"].startswith(
            "/replay?game=crazy_cultists"
        )
        path = tmp_path / f"cell-{cell['cell']}.json"
        path.write_bytes(orjson.dumps(record))
        assert cli(["replay", str(path), "--json"]) == 0
        replayed = json.loads(capsysbinary.readouterr().out)
        row = rows[cell["cell"], rep["seed"]]
        assert replayed["terminal"] is True
        assert replayed["winners"] == [int(s) for s in row["winners"].split(";") if s] == rep["winners"]
        assert replayed["turns"] == row["turns"] == rep["turns"]


def test_cli_sweep_shows_progress_and_writes_the_report(redis_url, tmp_path):
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(SMALL_SPECS["tricky_cultists"]))
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "sweep", str(spec_file), "--out", str(out), "--replay-base", "http://gw"],
        cwd=ROOT, env={**os.environ, "REDIS_URL": redis_url}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "80/80" in proc.stderr and "games/s" in proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["mode"] == "celery"
    with (out / "games.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 80 and {"seed", "cell", "bots", "winners", "turns", "team_by_seat"} <= set(rows[0])
    page = (out / "report.html").read_text()
    assert 'href="http://gw/replay?game=tricky_cultists' in page and "replays/cell-0.json" in page
    for name in ("seat_rates.png", "variant_heatmap.png", "game_lengths.png"):
        assert (out / "plots" / name).read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "replays" / "cell-1.json").read_text())["actions"]


def test_cli_refuses_a_bad_spec_before_queueing(redis_url, store, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_url)
    queued, sweeps = waiting_messages(store.r), store.r.zcard(INDEX)
    bad = tmp_path / "bad.yaml"
    for body, message in [
        ({"game": "chess", "games": 5}, "unknown game 'chess'"),
        ({"game": "tricky_cultists", "games": 5, "config": {"jokers": 2}}, "unknown config field(s) jokers"),
        ({"game": "tricky_cultists", "games": 0}, "'games': input should be greater than or equal to 1"),
        ({"game": "tricky_cultists", "games": 5, "lineups": ["clever"]}, "bad bot 'clever'"),
    ]:
        bad.write_text(yaml.safe_dump(body))
        assert cli(["sweep", str(bad)]) == 2
        assert message in capsys.readouterr().err
    assert (waiting_messages(store.r), store.r.zcard(INDEX)) == (queued, sweeps)


def test_worker_metrics_count_games_and_chunks(sweep_worker, store, celery_app):
    def value(samples, name, **labels):
        return samples.get((name, tuple(sorted(labels.items()))), 0.0)

    before = scrape(sweep_worker.metrics_port)
    spec, sweep_id, _summary = _run(store, celery_app, SMALL_SPECS["trash_cult"])
    after = scrape(sweep_worker.metrics_port)
    games = "cultists_sweep_games_simulated_total"
    assert (
        value(after, games, game="trash_cult") - value(before, games, game="trash_cult") == spec.total_games
    )
    chunks = "cultists_sweep_chunks_total"
    done = value(after, chunks, game="trash_cult", outcome="done") - value(
        before, chunks, game="trash_cult", outcome="done"
    )
    assert done == len(store.chunk_blobs(sweep_id))
    # A finished sweep's progress series leaves /metrics (only active sweeps are listed).
    assert not [k for k in after if k[0] == "cultists_sweep_progress_ratio" and ("sweep", sweep_id) in k[1]]
    assert value(after, "cultists_sweep_duration_seconds_count", game="trash_cult") >= 1


def test_nightly_suite_runs_every_game_and_compares_with_the_night_before(sweep_worker, store, celery_app):
    def night(day: int) -> dict[str, str]:
        celery_app.send_task(
            "workers.sweeps.tasks.run_nightly", kwargs={"games": 4, "day": day, "poll": 0.5}, queue="sweeps"
        )
        ids: dict[str, str] = {}
        for game in GAMES:
            for _ in range(200):
                found = store.r.zrangebyscore(f"{NIGHTLY}{game}", day, day)
                if found:
                    break
                time.sleep(0.05)
            ids[game] = found[-1].decode()
        for sweep_id in ids.values():
            assert wait_for(store, sweep_id, timeout=120) == "done"
        # finish_night judges the night once every sweep is in (polling, holding no worker).
        deadline = time.monotonic() + 60
        while not all((store.latest_drift(g) or {}).get("day") == day for g in GAMES):
            assert time.monotonic() < deadline, {g: store.latest_drift(g) for g in GAMES}
            time.sleep(0.2)
        return ids

    night(20240301)
    # The first night has nothing stored before it: nothing compared.
    assert all(store.latest_drift(g)["compared"] == 0 for g in GAMES)
    second = night(20240302)
    for game in GAMES:
        summary = store.summary(second[game])
        spec = parse_spec(summary["spec"])
        assert {c.players for c in spec.cells()} == set(
            range(spec.game_spec.min_players, spec.game_spec.max_players + 1)
        )
        drift = store.latest_drift(game)
        assert drift["sweep"] == second[game]
        assert drift["compared"] > 0
        assert drift["drifted"] == []  # same seeds, same code: nothing moves
        # Same seeds: paired (McNemar, paired t), but for win-when-played over the plays.
        assert set(drift["tests"]) <= {"mcnemar", "paired-t", "score"} and drift["tests"]["mcnemar"] > 0
    # Both nights are stored where the worker keeps them, the second compared with the first.
    from services.balance.sweeps.night import NightArchive

    archive = NightArchive(sweep_worker.nights)
    nights = archive.night_ids()
    assert len(nights) == 2 and archive.latest() == nights[1]
    second_drift = json.loads((sweep_worker.nights / nights[1] / "drift.json").read_text())
    assert second_drift["previous_night"] == nights[0]
    # finish_night streamed the chunks from Redis into the night it stored: the same night
    # (aggregates and every cell's per-game outcomes) as the same suite run in-process.
    from services.balance.sweeps.night import night_game

    stored = archive.load(nights[1])
    for game in GAMES:
        summary = store.summary(second[game])
        spec = parse_spec(summary["spec"])
        local_summary, _replays, results = run_local(spec, processes=1)
        local = night_game(spec, local_summary, results)
        assert stored[game].aggregates == summary["aggregates"] == local.aggregates
        assert list(stored[game].outcomes.blocks()) == list(local.outcomes.blocks())
        assert stored[game].outcomes.layout() == local.outcomes.layout() and len(local.outcomes) == len(
            spec.cells()
        )
    crazy = parse_spec(store.summary(second["crazy_cultists"])["spec"]) if "crazy_cultists" in GAMES else None
    if crazy is not None:
        assert {"variant=fiendish", "dark_powers=true", "base"} <= {c.variant for c in crazy.cells()}
    samples = scrape(sweep_worker.metrics_port)
    for game in GAMES:
        assert samples[("cultists_balance_drift", (("game", game),))] == 0.0
    for game in GAMES:  # nothing waits on a nightly: the worker writes its report itself
        page = sweep_worker.reports / f"nightly-{game}-{second[game]}" / "report.html"
        assert "Variants against the base rules" in page.read_text()
