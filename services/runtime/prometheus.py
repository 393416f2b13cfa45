"""Prometheus for a local run: the project's config, pointed at the ports this run chose.

`cultists run` starts Debian's `prometheus` binary as one more child. Its configuration is
rendered here from deploy/prometheus/ (the same scrape config, recording and alert rules as
docker-compose uses), into the run's data folder: the target files name this run's metrics
ports instead of compose service names, and the TSDB lives beside them, so history survives
a restart of `make run` like Redis's data does. Without the binary the run goes on without
it and says so in one line.

Knobs, all environment variables (tests shorten everything):

- PROMETHEUS_PORT: where it listens (topology, default 9090)
- PROMETHEUS_SCRAPE_INTERVAL / PROMETHEUS_EVALUATION_INTERVAL: the global intervals
  (default: deploy/prometheus/prometheus.yml's)
- PROMETHEUS_ALERT_FOR: caps every alert rule's `for:` hold (e.g. `2s`), so a test sees an
  alert fire without waiting the production minutes
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import yaml

from services.engines.registry import available_games, service_name

from .supervisor import ProcessSpec
from .topology import data_dir, engine_metrics_port, gateway_port, prometheus_port, worker_metrics_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
_DURATION = re.compile(r"^(\d+)(ms|s|m|h|d|w|y)$")
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def binary() -> str | None:
    """The prometheus executable, or None when this machine has none."""
    return shutil.which(os.environ.get("PROMETHEUS_BINARY", "prometheus"))


def local_targets() -> dict[str, list[dict]]:
    """file_sd target groups per scrape job, for the ports of this run (see topology)."""
    return {
        "engines": [
            {"targets": [f"127.0.0.1:{engine_metrics_port(g)}"], "labels": {"service": service_name(g)}}
            for g in available_games()
        ],
        "gateway": [{"targets": [f"127.0.0.1:{gateway_port()}"], "labels": {"service": "gateway"}}],
        "workers": [
            {"targets": [f"127.0.0.1:{worker_metrics_port(q)}"], "labels": {"service": f"worker-{q}"}}
            for q in ("sweeps", "tables", "bots", "tunes")
        ],
    }  # fmt: skip


def seconds(duration: str) -> float:
    """A Prometheus duration (one unit: `90s`, `5m`) in seconds; ValueError otherwise."""
    found = _DURATION.match(duration.strip())
    if not found:
        raise ValueError(f"not a Prometheus duration: {duration!r} (e.g. 15s, 5m)")
    return int(found.group(1)) * _SECONDS[found.group(2)]


def render(
    directory: Path,
    targets: dict[str, list[dict]],
    scrape_interval: str | None = None,
    evaluation_interval: str | None = None,
    alert_for: str | None = None,
    gateway_token: str | None = None,
) -> Path:
    """Write prometheus.yml, rules/ and targets/ into `directory`; returns the config path.

    Everything but the intervals and the targets is the project's own file, so the local
    Prometheus cannot drift from the one docker-compose runs."""
    for value in (scrape_interval, evaluation_interval, alert_for):
        if value:
            seconds(value)  # a typo is refused here, before anything is written
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    for key, value in (("scrape_interval", scrape_interval), ("evaluation_interval", evaluation_interval)):
        if value:
            config["global"][key] = value
    rules = directory / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    for source in sorted((DEPLOY / "rules").glob("*.yml")):
        text = source.read_text()
        if alert_for and "alerts" in source.stem:
            text = yaml.safe_dump(_cap_for(yaml.safe_load(text), alert_for), sort_keys=False)
        (rules / source.name).write_text(text)
    target_dir = directory / "targets"
    target_dir.mkdir(exist_ok=True)
    for job, groups in targets.items():
        (target_dir / f"{job}.json").write_text(json.dumps(groups, indent=2))
    for job in config["scrape_configs"]:
        if job["job_name"] in targets and "file_sd_configs" not in job:
            # compose finds this job's replicas by DNS; a local run knows its one address of each
            job.pop("dns_sd_configs", None)
            job.pop("relabel_configs", None)
            job["file_sd_configs"] = [{"files": [f"targets/{job['job_name']}.json"]}]
    if gateway_token:  # the gateway's /metrics answers only to this token (or an operator)
        token_file = directory / "gateway-metrics-token"
        token_file.write_text(gateway_token)
        token_file.chmod(0o600)
        for job in config["scrape_configs"]:
            if job["job_name"] == "gateway":
                job["authorization"] = {"type": "Bearer", "credentials_file": str(token_file)}
    path = directory / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _cap_for(document: dict, cap: str) -> dict:
    limit = seconds(cap)
    for group in document["groups"]:
        for rule in group["rules"]:
            if "alert" in rule and seconds(rule.get("for", "0s")) > limit:
                rule["for"] = cap
    return document


def url() -> str:
    return f"http://127.0.0.1:{prometheus_port()}"


def process_spec(gateway_token: str | None = None) -> ProcessSpec | None:
    """The Prometheus child of `cultists run` (config rendered now), or None without a
    binary; `gateway_token` is what it scrapes the gateway's /metrics with."""
    executable = binary()
    if executable is None:
        return None
    home = data_dir() / "prometheus"
    config = render(
        home / "config",
        local_targets(),
        scrape_interval=os.environ.get("PROMETHEUS_SCRAPE_INTERVAL"),
        evaluation_interval=os.environ.get("PROMETHEUS_EVALUATION_INTERVAL"),
        alert_for=os.environ.get("PROMETHEUS_ALERT_FOR"),
        gateway_token=gateway_token,
    )
    return ProcessSpec(
        "prometheus",
        [executable, f"--config.file={config}", f"--storage.tsdb.path={home / 'data'}",
         f"--web.listen-address=127.0.0.1:{prometheus_port()}", "--log.level=warn"],
    )  # fmt: skip


MISSING_NOTE = (
    "no prometheus binary: running without metrics history (/ops stays empty; apt install prometheus)"
)
