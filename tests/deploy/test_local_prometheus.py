"""The Prometheus that `cultists run` starts: its rendered config, and a run without one.

The rendered files are checked by promtool, the tool Prometheus itself loads them with.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from services.cli.run_cmd import plan
from services.runtime import prometheus
from services.runtime.run_lock import RunLock
from tests.deploy.test_configs import _run, _tool


def test_rendered_config_points_at_this_runs_ports_and_passes_promtool(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_METRICS_PORT_TRASH_CULT", "19102")
    monkeypatch.setenv("GATEWAY_PORT", "18000")
    monkeypatch.setenv("WORKER_METRICS_PORT_SWEEPS", "19104")
    config = prometheus.render(
        tmp_path, prometheus.local_targets(), scrape_interval="1s", evaluation_interval="2s", alert_for="3s"
    )
    assert "SUCCESS" in _run(_tool("promtool"), "check", "config", str(config), cwd=tmp_path)
    rendered = yaml.safe_load(config.read_text())
    assert rendered["global"] == {"scrape_interval": "1s", "evaluation_interval": "2s"}
    # compose finds the engines' replicas by DNS; this run's engines come from its own file
    jobs = {j["job_name"]: j for j in rendered["scrape_configs"]}
    assert jobs["engines"]["file_sd_configs"] == [{"files": ["targets/engines.json"]}]
    assert "dns_sd_configs" not in jobs["engines"] and "relabel_configs" not in jobs["engines"]
    targets = {
        job: json.loads((tmp_path / "targets" / f"{job}.json").read_text())
        for job in ("engines", "gateway", "workers")
    }
    engines = {g["labels"]["service"]: g["targets"] for g in targets["engines"]}
    assert engines["engine-trash-cult"] == ["127.0.0.1:19102"]
    assert targets["gateway"][0]["targets"] == ["127.0.0.1:18000"]
    assert ["127.0.0.1:19104"] in [g["targets"] for g in targets["workers"]]
    # Every alert's hold is capped (tests); rules without one keep none; recording rules are the project's.
    alerts = {
        r["alert"]: r
        for g in yaml.safe_load((tmp_path / "rules" / "alerts.yml").read_text())["groups"]
        for r in g["rules"]
    }
    assert alerts["EngineDown"]["for"] == "3s" and alerts["EngineLatencyHigh"]["for"] == "3s"
    assert "for" not in alerts["BalanceDrift"]
    assert (tmp_path / "rules" / "recording.yml").read_text() == (
        prometheus.DEPLOY / "rules" / "recording.yml"
    ).read_text()


@pytest.mark.parametrize("knob", ["scrape_interval", "evaluation_interval", "alert_for"])
def test_a_bad_duration_is_refused_before_anything_is_written(tmp_path, knob):
    with pytest.raises(ValueError, match="not a Prometheus duration"):
        prometheus.render(tmp_path / "out", prometheus.local_targets(), **{knob: "5 minutes"})
    assert not (tmp_path / "out").exists()


def test_run_plans_prometheus_with_its_data_in_the_runs_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CULTISTS_DATA", str(tmp_path))
    monkeypatch.setenv("PROMETHEUS_PORT", "19090")
    specs = {s.name: s for s in plan("redis://127.0.0.1:1/0")}
    argv = specs["prometheus"].argv
    assert f"--storage.tsdb.path={tmp_path / 'prometheus' / 'data'}" in argv
    assert "--web.listen-address=127.0.0.1:19090" in argv
    assert specs["gateway"].env["PROMETHEUS_URL"] == "http://127.0.0.1:19090"


def test_without_the_binary_the_rest_of_the_run_is_planned(tmp_path, monkeypatch):
    monkeypatch.setenv("CULTISTS_DATA", str(tmp_path))
    monkeypatch.setenv("PROMETHEUS_BINARY", str(tmp_path / "no-such-prometheus"))
    specs = {s.name: s for s in plan("redis://127.0.0.1:1/0")}
    assert "prometheus" not in specs and {"gateway", "tables", "sweeps", "beat"} <= set(specs)
    assert "PROMETHEUS_URL" not in specs["gateway"].env
    assert not (tmp_path / "prometheus").exists()


def test_status_says_a_run_without_prometheus_did_not_start_one(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"prometheus_url": None}))
    env = {"CULTISTS_DATA": str(tmp_path), "PATH": "/usr/bin:/bin"}
    lock = RunLock(tmp_path)  # held as a live run holds it: a run file without it is stale
    lock.acquire()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "services.cli.main", "status"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        lock.release()
    line = next(x for x in done.stdout.splitlines() if x.startswith("prometheus"))
    assert "not started" in line and "DOWN" not in line
