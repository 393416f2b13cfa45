"""The docs' figure tables, made from bench/results.json, so the docs never claim a figure
the bench did not print.

A table lives in a docs page between two markers,

    <!-- bench:gateway -->
    ...generated, never edited by hand...
    <!-- /bench:gateway -->

and `python -m bench.run --docs` (also run at the end of every bench run) rewrites every
such region in docs/*.md from the results file. tests/bench/test_docs_tables.py checks that
the committed docs equal what this makes from the committed results, so a figure changed by
hand, or a bench run whose results were committed without the docs, fails the tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[1] / "docs"
REGION = re.compile(r"(<!-- bench:(?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)", re.S)
TITLES = {
    "crazy_cultists": "Crazy Cultists",
    "trash_cult": "Trash Cult",
    "tricky_cultists": "Tricky Cultists",
}


class MissingFigures(LookupError):
    """A docs region names figures the results file does not hold."""


def _section(results: dict[str, Any], name: str) -> dict[str, Any]:
    found = results.get(name)
    if not isinstance(found, dict):
        raise MissingFigures(f"bench/results.json has no '{name}' section: run `python -m bench.run {name}`")
    return found


def _when(section: dict[str, Any]) -> str:
    """Where a table's figures came from: the run's time and the machine's load then."""
    load = section.get("load_average_at_end")
    load_text = ", ".join(f"{x:.2f}" for x in load) if load else "not recorded"
    return (
        f"Run of {section.get('measured_at', 'an unrecorded time')}, load average (1, 5, 15 min) {load_text}."
    )


def _targets(section: dict[str, Any]) -> list[str]:
    return [
        # In name order, as results.json keeps them (sort_keys), whether read back or not.
        f"- {'met' if ok else 'TARGET MISSED'}: {name}"
        for name, ok in sorted(section.get("targets", {}).items())
    ]


def gateway_table(results: dict[str, Any]) -> str:
    section = _section(results, "gateway")
    http = section["http"]
    floor = http.get("floor", {})
    ratios = http.get("gateway_cpu_over_floor", {})
    rows = [
        "| phase | moves/s | move p50 (ms) | move p99 (ms) | requests per move | gateway CPU per move (ms) "
        "| floor CPU per move (ms) | gateway / floor | engines, Redis CPU per move (ms) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for key in ("paced", "paced_half", "unpaced"):
        phase = http[key]
        offered = phase["offered_moves_per_second"]
        cpu = phase["cpu_ms_per_move"]
        engines = sum(ms for part, ms in cpu.items() if part.startswith("engine "))
        base = f"{floor[key]['cpu_ms_per_move']['gateway']:.2f}" if key in floor else "-"
        ratio = f"{ratios[key]:.2f}x" if key in ratios else "-"
        name = f"{offered} offered" if offered else "unpaced"
        rows.append(
            f"| {name} | {phase['moves_per_second']:,.0f} | {phase['move_p50_ms']:.1f} "
            f"| {phase['move_p99_ms']:.1f} | {phase.get('requests_per_move', 2.0):.2f} | {cpu['gateway']:.2f} "
            f"| {base} | {ratio} | {engines:.2f}, {cpu['redis']:.2f} |"
        )
    floor_rows = [
        f"floor at {p['offered_moves_per_second']} offered: {p['moves_per_second']:,.0f} moves/s, "
        f"p50 {p['move_p50_ms']:.1f} ms, p99 {p['move_p99_ms']:.1f} ms"
        for p in floor.values()
    ]
    lines = [*rows, "", _when(section) + " " + "; ".join(floor_rows) + ("." if floor_rows else "")]
    return "\n".join([*lines, "", *_targets(section)]) + "\n"


def grpc_table(results: dict[str, Any]) -> str:
    section = _section(results, "grpc")
    rows = [
        "| game | round trip p50 (ms), Ping / Apply | round trip p99 (ms) | handler p50, p99 (ms) "
        "| engine CPU per call (ms) |",
        "|---|---|---|---|---|",
    ]
    for game, title in TITLES.items():
        if game not in section:
            continue
        kinds = [(title, section[game])]
        if "read_back" in section[game]:
            kinds.append((f"{title}, state read back", section[game]["read_back"]))
        for name, figures in kinds:
            c, h, cpu = figures["client"], figures["server_handler"], figures["cpu_per_call_ms"]
            rows.append(
                f"| {name} | {c['ping_p50_ms']:.3f} / {c['apply_p50_ms']:.3f} ({c['apply_over_ping_p50']:.2f}x) "
                f"| {c['ping_p99_ms']:.3f} / {c['apply_p99_ms']:.3f} ({c['apply_over_ping_p99']:.2f}x) "
                f"| {h['ping_p50_ms']:.3f} / {h['apply_p50_ms']:.3f}, {h['ping_p99_ms']:.3f} / "
                f"{h['apply_p99_ms']:.3f} | {cpu['ping']:.3f} / {cpu['apply']:.3f} "
                f"({figures['cpu_apply_over_ping']:.2f}x) |"
            )
    return "\n".join([*rows, "", _when(section), "", *_targets(section)]) + "\n"


PROFILE_ROWS = 15


def profile_table(results: dict[str, Any]) -> str:
    """py-spy's top functions (bench/profile_gateway.py), the gateway's beside the floor's."""
    section = _section(results, "gateway_profile")
    columns = [("gateway", "own"), ("gateway", "ours"), ("floor", "own")]
    titles = {"own": "own time", "ours": "its own code, inclusive"}
    head = " | ".join(f"{app}, {titles[kind]} | %" for app, kind in columns)
    rows = [f"| {head} |", "|" + "---|" * (2 * len(columns))]
    for i in range(PROFILE_ROWS):
        cells = []
        for app, kind in columns:
            entries = section[app].get(kind, [])
            name, share = entries[i] if i < len(entries) else ("", None)
            cells += [f"`{name}`" if name else "", f"{share:.1f}" if share is not None else ""]
        rows.append("| " + " | ".join(cells) + " |")
    samples = {app: int(section[app]["samples"][0][1]) for app in ("gateway", "floor")}
    note = (
        f"Shares of {samples['gateway']:,} samples of the gateway's workers and {samples['floor']:,} of the "
        f"floor's, {section['seconds']:g} s each at 250 moves/s offered, 200 tables. "
    )
    return "\n".join([*rows, "", note + _when(section)]) + "\n"


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "gateway": gateway_table,
    "grpc": grpc_table,
    "gateway_profile": profile_table,
}


def rewrite(text: str, results: dict[str, Any]) -> str:
    """`text` with every marked region made again from `results`."""

    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in TABLES:
            raise MissingFigures(f"no generator for the docs region 'bench:{name}'; known: {sorted(TABLES)}")
        return match.group(1) + TABLES[name](results) + match.group(4)

    return REGION.sub(fill, text)


def pages(docs: Path = DOCS) -> list[Path]:
    """The docs pages that hold at least one generated region."""
    return sorted(p for p in docs.rglob("*.md") if REGION.search(p.read_text()))


def write(results: dict[str, Any], docs: Path = DOCS) -> list[Path]:
    """Rewrite every page's regions; the pages that changed. A page whose regions need
    figures the results lack is left as it is (and named), the others are still written."""
    changed = []
    for page in pages(docs):
        text = page.read_text()
        try:
            made = rewrite(text, results)
        except MissingFigures as exc:
            print(f"  {page.name}: not rewritten: {exc}")
            continue
        if made != text:
            page.write_text(made)
            changed.append(page)
    return changed
