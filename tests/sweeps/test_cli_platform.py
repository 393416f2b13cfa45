"""`cultists sweep` finds the running platform's Redis the way `cultists status` does, and
waits out a Redis restart instead of dying with a traceback."""

from __future__ import annotations

import io
import json
import threading
import time

import yaml
from rich.console import Console

from services.balance.sweeps import control
from services.balance.sweeps.store import SweepStore
from services.cli.main import main as cli
from services.cli.sweep_cmd import _patiently
from services.runtime.embedded_redis import start_redis
from services.runtime.run_lock import RunLock

TINY = {"game": "trash_cult", "seed": 3, "games": 2, "chunk": 2, "players": [2], "lineups": ["random"]}


def test_sweep_without_redis_url_uses_the_run_files_redis(redis_url, store, tmp_path, monkeypatch, capsys):
    """With REDIS_URL unset, the sweep goes to the Redis `cultists run` wrote in its run file
    (a run holding the folder's lock, as a live run does), never to a guessed default."""
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setenv("CULTISTS_DATA", str(tmp_path / "var"))
    (tmp_path / "var").mkdir()
    (tmp_path / "var" / "run.json").write_text(json.dumps({"redis_url": redis_url}))
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(TINY))
    lock = RunLock(tmp_path / "var")
    lock.acquire()
    try:
        assert cli(["sweep", str(spec_file), "--no-wait"]) == 0
    finally:
        lock.release()
    sweep_id = capsys.readouterr().out.strip()
    assert store.exists(sweep_id)
    assert store.spec(sweep_id)["game"] == "trash_cult"
    assert control.cancel(store, sweep_id)  # nothing for a later test's worker to play


def test_follow_reads_wait_out_a_redis_restart(tmp_path):
    """The follower's reads retry while Redis is away and carry on when it is back."""
    server = start_redis(persist=True, data_dir=tmp_path)
    store = SweepStore.from_url(server.url)
    store.r.set("k", "before")
    store.r.execute_command("BGREWRITEAOF")
    time.sleep(0.5)
    server.process.kill()
    server.process.wait()
    out = io.StringIO()
    got: list[bytes] = []
    reader = threading.Thread(
        target=lambda: got.append(_patiently(Console(file=out), lambda: store.r.get("k")))
    )
    reader.start()
    try:
        time.sleep(3)  # longer than redis-py's own few retries
        assert reader.is_alive() and not got
        server = start_redis(port=server.port, persist=True, data_dir=tmp_path)
        reader.join(timeout=30)
        assert got == [b"before"]
        assert "reconnecting" in out.getvalue() and "Redis is back" in out.getvalue()
    finally:
        server.stop()
        store.r.close()
