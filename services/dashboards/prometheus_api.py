"""The two read-only calls /ops makes to Prometheus's HTTP API, and the shapes it draws.

Only `query_range` (a panel's query over the picked time range) and `alerts` (the alerts the
rules hold now) are ever asked; both are GETs. Values come back aligned on the range's
steps, with gaps as None (Prometheus's NaN and infinities cannot be drawn), so the page
hands them to the chart as they are.
"""

from __future__ import annotations

import json
import math
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from .panels import Panel, expand

_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")


class PrometheusError(Exception):
    """Prometheus could not be reached or refused the query (its own words)."""


@dataclass(frozen=True)
class Window:
    """A range query's start, end and step (seconds), end aligned to the step so that every
    viewer asking in the same step asks the very same query."""

    start: int
    end: int
    step: int

    @classmethod
    def ending(cls, now: float, span: int, points: int) -> Window:
        step = max(1, span // points)
        end = int(now) // step * step
        return cls(end - span, end, step)

    def times(self) -> list[int]:
        return list(range(self.start, self.end + 1, self.step))


class Prometheus:
    def __init__(self, base_url: str, timeout: float = 5.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        url = f"{self.base_url}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as reply:
                body = json.loads(reply.read())
        except urllib.error.HTTPError as exc:  # 400/422: a bad query, with Prometheus's reason
            try:
                reason = json.loads(exc.read()).get("error", exc.reason)
            except ValueError:
                reason = exc.reason
            raise PrometheusError(f"Prometheus answered {exc.code}: {reason}") from None
        except (OSError, ValueError) as exc:
            raise PrometheusError(f"Prometheus at {self.base_url} did not answer: {exc}") from None
        if body.get("status") != "success":
            raise PrometheusError(f"Prometheus refused: {body.get('error', body)}")
        return body["data"]

    def query_range(self, expr: str, window: Window) -> list[dict[str, Any]]:
        """The matrix for `expr`: [{"metric": {labels}, "values": [[t, "v"], ...]}, ...]."""
        params = {"query": expr, "start": window.start, "end": window.end, "step": window.step}
        return self._get("/api/v1/query_range", params)["result"]

    def alerts(self) -> list[dict[str, Any]]:
        return self._get("/api/v1/alerts")["alerts"]


def legend(template: str, labels: dict[str, str]) -> str:
    """Grafana's legend format: `{{label}}` replaced by the label's value (empty if absent)."""
    text = _LEGEND.sub(lambda m: labels.get(m.group(1), ""), template)
    return " ".join(text.split()) or "value"


def _number(raw: str) -> float | None:
    value = float(raw)
    return value if math.isfinite(value) else None


def panel_data(client: Prometheus, panel: Panel, game: str | None, window: Window) -> dict[str, Any]:
    """Every series of a time-series panel over `window`, aligned on the window's steps."""
    times = window.times()
    series: list[dict[str, Any]] = []
    queries = []
    for query in panel.queries:
        expr = expand(query.expr, game)
        queries.append(expr)
        for result in client.query_range(expr, window):
            # A recorded series carries its rule's name; the label set is what tells lines apart.
            labels = {k: v for k, v in result["metric"].items() if k != "__name__"}
            values: list[float | None] = [None] * len(times)
            for stamp, raw in result["values"]:
                index = round((float(stamp) - window.start) / window.step)
                if 0 <= index < len(times):
                    values[index] = _number(raw)
            series.append({"name": legend(query.legend, labels), "query": len(queries) - 1,
                           "labels": labels, "values": values})  # fmt: skip
    # A label set's lines side by side (Apply p50, p95, p99, then View's...), so the legend
    # reads by method rather than by query.
    series.sort(key=lambda s: (sorted(s["labels"].items()), s["query"]))
    return {
        "panel": panel.id,
        "game": game,
        "unit": panel.unit,
        "start": window.start,
        "end": window.end,
        "step": window.step,
        "queries": queries,
        "times": times,
        "series": series,
    }


def alerts_data(client: Prometheus) -> dict[str, Any]:
    """The alerts Prometheus holds now, firing ones first, in the page's words."""
    found = []
    for alert in client.alerts():
        labels = dict(alert.get("labels", {}))
        annotations = alert.get("annotations", {})
        found.append(
            {
                "name": labels.pop("alertname", "?"),
                "state": alert.get("state", "?"),
                "severity": labels.pop("severity", ""),
                "labels": labels,
                "summary": annotations.get("summary", ""),
                "description": annotations.get("description", ""),
                "since": alert.get("activeAt"),
                "value": alert.get("value"),
            }
        )
    found.sort(key=lambda a: (a["state"] != "firing", a["name"], sorted(a["labels"].items())))
    return {"alerts": found}
