"""A tune's report: summary.json, report.html and PNG plots, drawn from the summary alone.

Plots (matplotlib's Agg backend, as the sweep report's `services/balance/sweeps/plots.py`):

- `objective_<n>.png`: each objective's measured value against each searched field, one
  point per config (bigger for more games), the target shaded: where does the field push it?
- `progress.png`: the best racing score so far against the search games spent.
- `pareto.png` (several objectives): the finalists' losses on the first two objectives,
  the Pareto front joined up.
"""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import orjson


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _words(config: dict[str, Any]) -> str:
    from services.balance.sweeps.spec import variant_label

    return variant_label(config)


def _played(summary: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in summary["history"] if t["state"] == "complete" and t["games"]]


def objective_plot(summary: dict[str, Any], index: int) -> bytes:
    spec = summary["spec"]
    obj = spec["objectives"][index]
    fields = list(spec["search"])
    trials = _played(summary)
    fig, axes = plt.subplots(1, len(fields), figsize=(4.5 * len(fields), 3.5), squeeze=False)
    target = obj["target"]
    lo, hi = (0.0, target) if not isinstance(target, list) else target
    label = trials[0]["objectives"][index]["label"] if trials else obj["metric"]
    for ax, name in zip(axes[0], fields, strict=True):
        xs = [t["config"][name] for t in trials]
        best = summary.get("best")
        bx = best["config"][name] if best else None
        if xs and not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs):
            order = sorted(set(map(str, xs)))  # choices: one tick per choice
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels(order)
            xs = [order.index(str(x)) for x in xs]
            bx = order.index(str(bx)) if best else None
        ys = [t["objectives"][index]["value"] for t in trials]
        most = max(u["games"] for u in trials)
        sizes = [10 + 60 * t["games"] / most for t in trials]
        ax.axhspan(lo, hi, color="tab:green", alpha=0.15, label="target")
        ax.scatter(xs, ys, s=sizes, alpha=0.6, label="configs")
        if best:
            ax.scatter(
                [bx], [best["objectives"][label]["value"]], marker="*", s=200, color="tab:red", label="best"
            )
        ax.set_xlabel(name)
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    fig.suptitle(f"{label} against each searched field (bigger: more games)")
    return _png(fig)


def progress_plot(summary: dict[str, Any]) -> bytes:
    trials = _played(summary)
    xs, ys, best = [], [], float("inf")
    for t in sorted(trials, key=lambda t: (t["spent"], t["number"])):
        best = min(best, max(t["losses"]))
        xs.append(t["spent"])
        ys.append(best)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.step(xs, ys, where="post")
    ax.axhline(1.0, linestyle="dashed", color="grey", linewidth=1, label="on target (loss 1)")
    ax.set_xlabel("search games spent")
    ax.set_ylabel("best score so far (worst objective's loss)")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.legend(fontsize=7)
    ax.set_title("search progress")
    return _png(fig)


def pareto_plot(summary: dict[str, Any]) -> bytes:
    trials = _played(summary)
    top = max((t["games"] for t in trials), default=0)
    finalists = [t for t in trials if t["games"] == top]
    labels = [o["label"] for o in trials[0]["objectives"][:2]] if trials else ["", ""]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.scatter(
        [t["losses"][0] for t in trials], [t["losses"][1] for t in trials], s=12, alpha=0.3, label="trials"
    )
    ax.scatter(
        [t["losses"][0] for t in finalists], [t["losses"][1] for t in finalists], s=25, label="finalists"
    )
    front = sorted(
        (p["objectives"][labels[0]]["loss"], p["objectives"][labels[1]]["loss"]) for p in summary["pareto"]
    )
    if front:
        ax.plot(*zip(*front, strict=True), marker="*", color="tab:red", label="Pareto front")
    ax.set_xlabel(f"loss: {labels[0]}")
    ax.set_ylabel(f"loss: {labels[1]}")
    ax.legend(fontsize=7)
    ax.set_title("Pareto front (loss 1 = on target's edge)")
    return _png(fig)


def render_plots(summary: dict[str, Any]) -> dict[str, bytes]:
    if not _played(summary):
        return {}
    out = {
        f"objective_{i}.png": objective_plot(summary, i) for i in range(len(summary["spec"]["objectives"]))
    }
    out["progress.png"] = progress_plot(summary)
    if len(summary["spec"]["objectives"]) > 1 and summary["pareto"]:
        out["pareto.png"] = pareto_plot(summary)
    return out


def headline(summary: dict[str, Any]) -> list[str]:
    """The designer's sentences: each confirmed objective of the best config."""
    best = summary.get("best")
    if not best:
        return ["No config that keeps every guard could be played within the budget."]
    conf = best["confirmed"]
    if conf["verdict"] == "no_change_needed":
        early = " (the search stopped at its first look)" if summary.get("stopped_early") else ""
        return [
            *(o["text"] for o in conf["objectives"] if not best["config"]),
            f"No change needed: the rules as printed already meet every target and guard on "
            f"{conf['games']:,} fresh games per table{early}. "
            f"Search: {summary['trials']} trials, {summary['search_games']:,} of {summary['budget']:,} games budgeted.",
        ]
    lines = [o["text"] for o in conf["objectives"]]
    lines += [
        f"guard broken: {g['table']}: {g['text']} (measured {g['value']:.3f})"
        for g in conf.get("guards", [])
        if not g["holds"]
    ]
    lines += [r["text"] for r in conf.get("side_effects", []) if r["significant"]][:8]
    verdict = {"confirmed": "CONFIRMED", "unproven": "NOT PROVEN", "miss": "MISSED"}[conf["verdict"]]
    lines.append(
        f"Verdict on {conf['games']:,} fresh games per table: {verdict}. "
        f"Search: {summary['trials']} trials, {summary['search_games']:,} of {summary['budget']:,} games budgeted."
    )
    return lines


def write_report(out: Path, summary: dict[str, Any]) -> Path:
    """summary.json, plots/*.png and report.html under `out`; returns the page's path."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    plots = render_plots(summary)
    (out / "plots").mkdir(exist_ok=True)
    for name, data in plots.items():
        (out / "plots" / name).write_bytes(data)
    page = out / "report.html"
    page.write_text(render_page(summary, list(plots)))
    return page


def render_page(summary: dict[str, Any], plots: list[str]) -> str:
    """The report's HTML; its images are `plots/<name>` beside it (a folder on disk, or the
    API's `/api/tunes/<id>/plots/<name>` next to `/api/tunes/<id>/report`)."""
    e = html.escape
    parts = [
        f"<!doctype html><meta charset='utf-8'><title>tune {e(summary['name'])}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd}.miss,.unproven{color:#b00}.confirmed{color:#070}</style>",
        f"<h1>Tune: {e(summary['name'])} ({e(summary['game'])})</h1>",
        "<ul>" + "".join(f"<li>{e(line)}</li>" for line in headline(summary)) + "</ul>",
    ]
    points = summary["pareto"] or ([summary["best"]] if summary.get("best") else [])
    if points:
        parts.append("<h2>Confirmation on fresh seeds</h2><table><tr><th>config</th><th>objective</th>"
                     "<th>value</th><th>95% interval</th><th>printed rules</th><th>target</th><th>verdict</th></tr>")  # fmt: skip
        for p in points:
            for o in p["confirmed"]["objectives"]:
                parts.append(
                    f"<tr><td>{e(_words(p['config']))}</td><td>{e(o['objective'])}</td><td>{o['value']:.4f}</td>"
                    f"<td>{o['lo']:.4f}-{o['hi']:.4f}</td><td>{o['printed_rules']['value']:.4f}</td>"
                    f"<td>{e(str(o['target']))}</td><td class='{o['verdict']}'>{o['verdict']}</td></tr>"
                )
        parts.append("</table>")
        for p in points:
            conf = p["confirmed"]
            parts.append(f"<h3>Guards and side effects of {e(_words(p['config']))}</h3>")
            parts.append("<table><tr><th>table</th><th>guard</th><th>measured</th><th>holds</th></tr>")
            for g in conf.get("guards", []):
                parts.append(
                    f"<tr><td>{e(g['table'])}</td><td>{e(g['text'])}</td><td>{g['value']:.4f}</td>"
                    f"<td class='{'confirmed' if g['holds'] else 'miss'}'>{'yes' if g['holds'] else 'NO'}</td></tr>"
                )
            parts.append("</table>")
            rows = conf.get("side_effects", [])
            if rows:
                parts.append(
                    "<p>Every standard metric against the rules as printed on the same fresh seeds "
                    "(McNemar / paired t, one Benjamini-Hochberg family per config):</p><table><tr>"
                    "<th>table</th><th>metric</th><th>printed</th><th>this config</th><th>change (95% interval)</th>"
                    "<th>adjusted p</th></tr>"
                )
                for r in rows:
                    scale, unit = (100, " pts") if r["kind"] == "rate" else (1, " turns")
                    parts.append(
                        f"<tr><td>{e(r['table'])}</td><td>{e(r['metric'])}</td><td>{scale * r['printed_rules']:.1f}</td>"
                        f"<td>{scale * r['value']:.1f}</td><td>{scale * r['difference']:+.1f}{unit} "
                        f"({scale * r['lo']:+.1f} to {scale * r['hi']:+.1f})</td>"
                        f"<td class='{'miss' if r['significant'] else ''}'>{r['p_adj']:.3g}{' *' if r['significant'] else ''}</td></tr>"
                    )
                parts.append("</table>")
    parts.append("<h2>Plots</h2>")
    for name in plots:
        parts.append(f"<p><img src='plots/{name}' alt='{name}'></p>")
    parts.append(
        "<h2>Trials</h2><table><tr><th>#</th><th>config</th><th>games</th><th>losses</th><th>state</th></tr>"
    )
    for t in summary["history"]:
        parts.append(
            f"<tr><td>{t['number']}</td><td>{e(_words(t['config']))}</td><td>{t['games']}</td>"
            f"<td>{', '.join(f'{x:.3f}' for x in t['losses'])}</td><td>{e(t['state'])} {e(t.get('error', ''))}</td></tr>"
        )
    parts.append("</table>")
    return "\n".join(parts)
