"""`cultists sweep` finds the running platform's Redis the way `cultists status` does."""

from __future__ import annotations

import json

import yaml

from services.cli.main import main as cli
from workers.sweeps import control

TINY = {"game": "trash_cult", "seed": 3, "games": 2, "chunk": 2, "players": [2], "lineups": ["random"]}


def test_sweep_without_redis_url_uses_the_run_files_redis(redis_url, store, tmp_path, monkeypatch, capsys):
    """With REDIS_URL unset, the sweep goes to the Redis `cultists run` wrote in its run file,
    not to the 127.0.0.1:6379 default (where no Redis runs in the tests)."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CULTISTS_DATA", str(tmp_path / "var"))
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "run.json").write_text(json.dumps({"redis_url": redis_url}))
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(TINY))
    assert cli(["sweep", str(spec_file), "--no-wait"]) == 0
    sweep_id = capsys.readouterr().out.strip()
    assert store.exists(sweep_id)
    assert store.spec(sweep_id)["game"] == "trash_cult"
    assert control.cancel(store, sweep_id)  # nothing for a later test's worker to play
