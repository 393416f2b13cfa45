"""Writes the Grafana dashboards in dashboards/ from the panel list in services/dashboards/panels.py.

Dashboards are provisioned from files, never hand-imported. The panel list is shared with the
gateway's /ops page, so Grafana and /ops always show the same queries; writing the JSON from
it keeps every panel in the same shape and lets a test check that each query names a metric
the services really export. Run `python deploy/grafana/build_dashboards.py` after a change;
the tests fail if the JSON files and the panel list disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from services.dashboards.panels import DASHBOARDS, Dashboard, Panel  # noqa: E402

OUT = Path(__file__).with_name("dashboards")
DATASOURCE = {"type": "prometheus", "uid": "prometheus"}
# Per-game panels repeat over this variable, one copy per game Prometheus has seen.
GAME_VARIABLE = {
    "name": "game",
    "label": "Game",
    "type": "query",
    "datasource": DATASOURCE,
    "definition": "label_values(cultists_engine_rpc_duration_seconds_count, game)",
    "query": {"query": "label_values(cultists_engine_rpc_duration_seconds_count, game)", "refId": "games"},
    "refresh": 2,
    "includeAll": True,
    "multi": True,
    "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
    "sort": 1,
}


def _width(panel: Panel) -> int:
    if panel.kind == "alerts":
        return 24
    return 8 if panel.per_game else 12


def _panel(number: int, panel: Panel, x: int, y: int) -> dict:
    height = 6 if panel.kind == "alerts" else 8
    built: dict = {
        "id": number,
        "type": "table" if panel.kind == "alerts" else "timeseries",
        "title": panel.title,
        "description": panel.help,
        "datasource": DATASOURCE,
        "gridPos": {"h": height, "w": _width(panel), "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": panel.unit}, "overrides": []},
        "targets": [
            {"refId": chr(65 + j), "datasource": DATASOURCE, "expr": q.expr, "legendFormat": q.legend}
            for j, q in enumerate(panel.queries)
        ],
    }
    if panel.kind == "alerts":  # the firing alerts now, one row each, labels as columns
        for target in built["targets"]:
            target |= {"instant": True, "range": False, "format": "table"}
        built["transformations"] = [
            {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
        ]
    if panel.per_game:
        built |= {"repeat": "game", "repeatDirection": "h", "maxPerRow": 3}
    return built


def dashboard(board: Dashboard) -> dict:
    built, x, y, row_height = [], 0, 0, 0
    for i, panel in enumerate(board.panels):
        width = _width(panel)
        if x + width > 24:
            x, y, row_height = 0, y + row_height, 0
        built.append(_panel(i + 1, panel, x, y))
        row_height = max(row_height, built[-1]["gridPos"]["h"])
        x += width
    variables = [GAME_VARIABLE] if any(p.per_game for p in board.panels) else []
    return {
        "uid": f"cultists-{board.uid}",
        "title": board.title,
        "tags": ["cultists"],
        "timezone": "utc",
        "schemaVersion": 39,
        "refresh": "10s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": variables},
        "panels": built,
    }


def render() -> dict[str, str]:
    return {f"{board.uid}.json": json.dumps(dashboard(board), indent=2) + "\n" for board in DASHBOARDS}


if __name__ == "__main__":
    OUT.mkdir(exist_ok=True)
    for name, text in render().items():
        (OUT / name).write_text(text)
        print(f"wrote {OUT / name}")
