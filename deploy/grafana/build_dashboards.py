"""Writes the Grafana dashboards in dashboards/ from the compact panel lists below.

Dashboards are provisioned from files, never hand-imported; writing them from one list
keeps every panel in the same shape and lets a test check that each query names a metric
the services really export. Run `python deploy/grafana/build_dashboards.py` after a change;
the tests fail if the JSON files and this script disagree.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).with_name("dashboards")
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}

# (title, unit, [(expr, legend), ...])
Panel = tuple[str, str, list[tuple[str, str]]]

DASHBOARDS: dict[str, tuple[str, list[Panel]]] = {
    "engines": (
        "Cultists / Engine latency",
        [
            ("p50 latency by game and method", "s",
             [("game_method:cultists_engine_rpc_latency_seconds:p50", "{{game}} {{method}}")]),
            ("p99 latency by game and method", "s",
             [("game_method:cultists_engine_rpc_latency_seconds:p99", "{{game}} {{method}}")]),
            ("Calls per second", "reqps",
             [("sum by (game, method) (rate(cultists_engine_rpc_duration_seconds_count[1m]))", "{{game}} {{method}}")]),
            ("Errors per second by code", "reqps",
             [("sum by (game, method, code) (rate(cultists_engine_rpc_errors_total[1m]))", "{{game}} {{method}} {{code}}")]),
            ("Moves applied per second", "ops", [("game:cultists_engine_moves:rate1m", "{{game}}")]),
            ("Games started and finished per minute", "short",
             [("sum by (game) (rate(cultists_engine_games_started_total[5m])) * 60", "{{game}} started"),
              ("sum by (game) (rate(cultists_engine_games_finished_total[5m])) * 60", "{{game}} finished")]),
        ],
    ),
    "tables": (
        "Cultists / Tables and matchmaking",
        [
            ("Open tables by status", "short", [("sum by (status) (cultists_gateway_open_tables)", "{{status}}")]),
            ("Queued matchmaking tickets", "short", [("sum by (game) (cultists_gateway_queued_tickets)", "{{game}}")]),
            ("Time to match p50 / p99", "s",
             [("cultists_gateway_time_to_match_seconds:p50", "p50"),
              ("cultists_gateway_time_to_match_seconds:p99", "p99")]),
            ("Gateway p99 latency by route", "s", [("route:cultists_gateway_request_latency_seconds:p99", "{{route}}")]),
            ("Gateway requests per second by status", "reqps",
             [("sum by (status) (rate(cultists_gateway_request_duration_seconds_count[1m]))", "{{status}}")]),
            ("Gateway -> engine call p99", "s",
             [("histogram_quantile(0.99, sum by (game, method, le) (rate(cultists_gateway_engine_call_duration_seconds_bucket[5m])))", "{{game}} {{method}}")]),
            ("Gateway -> engine errors", "reqps",
             [("sum by (game, code) (rate(cultists_gateway_engine_errors_total[5m]))", "{{game}} {{code}}")]),
            ("Celery queue length", "short", [("cultists_celery_queue_length", "{{queue}}")]),
        ],
    ),
    "sweeps": (
        "Cultists / Balance sweeps",
        [
            ("Games simulated per second", "ops", [("game:cultists_sweep_games:rate1m", "{{game}}")]),
            ("Sweep progress", "percentunit", [("cultists_sweep_progress_ratio", "{{sweep}} {{game}}")]),
            ("Chunks by outcome per minute", "short",
             [("sum by (outcome) (rate(cultists_sweep_chunks_total[5m])) * 60", "{{outcome}}")]),
            ("Chunk duration p90", "s",
             [("histogram_quantile(0.9, sum by (game, le) (rate(cultists_sweep_chunk_duration_seconds_bucket[10m])))", "{{game}}")]),
            ("Balance drift (metrics beyond their interval)", "short", [("cultists_balance_drift", "{{game}}")]),
            ("Flagged cells (Benjamini-Hochberg)", "short", [("cultists_balance_flagged_cells", "{{game}}")]),
            ("First-seat advantage", "percentunit", [("cultists_balance_first_seat_advantage", "{{game}} {{cell}}")]),
            ("Workers up", "short", [("up{job=\"workers\"}", "{{instance}}")]),
        ],
    ),
}  # fmt: skip


def dashboard(uid: str, title: str, panels: list[Panel]) -> dict:
    built = []
    for i, (panel_title, unit, targets) in enumerate(panels):
        built.append(
            {
                "id": i + 1,
                "type": "timeseries",
                "title": panel_title,
                "datasource": DATASOURCE,
                "gridPos": {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i // 2) * 8},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "targets": [
                    {"refId": chr(65 + j), "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
                    for j, (expr, legend) in enumerate(targets)
                ],
            }
        )
    return {
        "uid": f"cultists-{uid}",
        "title": title,
        "tags": ["cultists"],
        "timezone": "utc",
        "schemaVersion": 39,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "panels": built,
    }


def render() -> dict[str, str]:
    return {
        f"{uid}.json": json.dumps(dashboard(uid, title, panels), indent=2) + "\n"
        for uid, (title, panels) in DASHBOARDS.items()
    }


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, text in render().items():
        (OUT / name).write_text(text)
        print(f"wrote {OUT / name}")
