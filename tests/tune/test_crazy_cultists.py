"""Crazy Cultists at 2 players (the CC-2 switch on): tune threshold and starting hand until
seat 0's edge is gone, proven on fresh seeds, through the CLI as a designer runs it."""

from __future__ import annotations

import json

import yaml

from services.cli.main import main as cli

CC_2P = {
    "name": "cc 2p first seat",
    "game": "crazy_cultists",
    "seed": 1,
    "players": [2],
    "config": {"two_players": True},  # CC-2: 2 players only with the switch on
    "lineups": ["random"],
    "search": {"threshold": {"low": 8, "high": 14}, "starting_hand": {"low": 1, "high": 3}},
    "objectives": [{"metric": "seat_rate", "seat": 0, "target": [0.45, 0.55]}],
    "budget": 2000,
    "racing": {"games": 100, "eta": 3, "rungs": 3, "batch": 6},
    "confirm": 2000,
    # Every config here that brings seat 0 inside 45-55% changes the game's length by more
    # than the default guard's 25% (threshold 8 shortens it by ~29%, 14 lengthened it by
    # ~69%): with the guard on, this tune ends unproven rather than choose one (guards are
    # proved on the planted game, tests/tune/test_guards.py). Off here, so the answer is
    # found and its length change reported beside it.
    "guards": {"length_change": None},
}


def test_cc_two_players_tune_ends_with_seat_0_confirmed_inside_45_55(tmp_path, capsys):
    path = tmp_path / "tune.yaml"
    path.write_text(yaml.safe_dump(CC_2P, sort_keys=False))
    out = tmp_path / "report"
    assert cli(["tune", str(path), "--local", "-j", "1", "--json", "--out", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["search_games"] <= CC_2P["budget"]
    assert summary["trials"] >= 6
    best = summary["best"]
    assert set(best["config"]) == {"threshold", "starting_hand"}
    assert best["confirmed"]["verdict"] == "confirmed"
    (seat0,) = best["confirmed"]["objectives"]
    assert seat0["lo"] >= 0.45 and seat0["hi"] <= 0.55
    assert seat0["printed_rules"]["value"] > 0.53  # the printed rules favour seat 0 at 2 players
    assert "under the rules as printed" in seat0["text"]
    (length,) = [s for s in best["confirmed"]["side_effects"] if s["metric"] == "mean length"]
    assert length["significant"] and abs(length["difference"]) > 0.25 * length["printed_rules"]
    assert json.loads((out / "summary.json").read_text())["best"] == best
    page = (out / "report.html").read_text()
    assert "CONFIRMED" in page and "plots/objective_0.png" in page
    for name in ("objective_0.png", "progress.png"):
        assert (out / "plots" / name).read_bytes()[:4] == b"\x89PNG"
