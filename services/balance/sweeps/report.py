"""The sweep report: HTML with tables and PNG plots, the JSON summary, per-game CSV, replays.

Layout of a report directory:

    report.html          tables + the three plots; flagged cells first, each with replay links
    summary.json         the JSON summary (aggregates + run info + nightly drift if any)
    games/cell=N/*.parquet  one row per game: seed, seats' bots, winners, length, facts (records.py)
    games.csv            the same rows as CSV, while the sweep is small (records.CSV_MAX_GAMES)
    plots/*.png          seat_rates, variant_heatmap, game_lengths
    replays/cell-N.json  a `cultists replay`-compatible record of cell N's representative game
    replays/cell-N.html  that game move by move, readable from the file without a gateway

`render_html(..., inline=True)` embeds the PNGs as data URIs, so the gateway can serve a
report as one self-contained page without any files.
"""

from __future__ import annotations

import base64
import csv
import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from services.engines.registry import load_game

from .cards import report_html as cards_html
from .cards import report_of_folder
from .plots import render_all
from .records import CSV_MAX_GAMES, write_game_records


def _e(value: Any) -> str:
    return html.escape(str(value))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _interval(item: dict[str, Any]) -> str:
    return f"{_pct(item['rate'])} [{_pct(item['lo'])}, {_pct(item['hi'])}]"


def _table(headers: list[str], rows: list[list[Any]], raw_cols: frozenset[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{c if i in raw_cols else _e(c)}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _mde(value: float | None, turns: bool = False) -> str:
    """A minimum detectable effect in the metric's own unit (power.py)."""
    if value is None:
        return "-"
    return f"{value:.1f} turns" if turns else f"{100 * value:.1f} points"


def _power_section(power: dict[str, Any] | None) -> str:
    """What the report could have found: per metric, the effect found with 80 % power."""
    if not power or not power.get("by_metric"):
        return ""
    rows = [
        [
            m["metric"],
            m["tests"],
            _mde(m["mde"], "turns" in m["metric"]),
            f"{_mde(m['smallest'], 'turns' in m['metric'])} to {_mde(m['largest'], 'turns' in m['metric'])}",
        ]
        for m in power["by_metric"]
    ]
    return (
        "<h2>Smallest detectable effects</h2>"
        f"<p>The change each test finds {100 * power['power']:.0f}% of the time at this sweep's size, after "
        f"Benjamini-Hochberg (a lone effect must reach p &le; {power['level']:.2g}). A smaller real effect "
        "may go unflagged: to see half of it, play four times the games.</p>"
        + _table(["metric", "tests", "typical", "range over cells"], rows)
    )


def _mark(flag: bool) -> str:
    return "<b class=flag>outside</b>" if flag else ""


def _replay_links(rep: dict[str, Any] | None, replay_base: str, local: bool = False) -> str:
    """A representative game's links. A report read from its folder (`local`) links the
    static move list beside it first, which opens from the file; the gateway's replay page
    needs a gateway at `replay_base`, and a relative link to it would not resolve from disk."""
    if not rep:
        return "no games"
    won = ",".join(str(s) for s in rep["winners"]) or "draw"
    links = []
    if local:
        links.append(f'<a href="{_e(rep["record"].removesuffix(".json") + ".html")}">moves</a>')
    if replay_base or not local:
        links.append(f'<a href="{_e(replay_base + rep["replay_url"])}">replay page</a>')
    links.append(f'<a href="{_e(rep["record"])}">record file</a>')
    return f"seed {rep['seed']} (winners {won}, {rep['turns']} turns): " + " · ".join(links)


def _cell_section(cell: dict[str, Any], replay_base: str, local: bool = False) -> str:
    parts = [f"<h3 id=cell-{cell['cell']}>Cell {cell['cell']}: {_e(cell['label'])}</h3>"]
    if cell.get("skipped"):
        parts.append(f"<p>Skipped, no games played: {_e(cell['skipped'])}.</p>")
        return "\n".join(parts)
    if cell["flagged"]:
        parts.append(f"<p class=flag>Flagged by: {_e(', '.join(cell['flags']))}</p>")
    parts.append(
        f"<p>{cell['games']} games · fair share {_pct(cell['fair_share'])} · draws {_interval(cell['draws'])} · "
        f"turn cap reached {_interval(cell['capped'])} · mean decisions {cell['decisions_mean']:.1f}</p>"
    )
    fsa = cell["first_seat_advantage"]
    unit = "team" if cell.get("teams") else "seat"
    parts.append(
        f"<p>First-seat advantage: {fsa['advantage']:+.3f} [{fsa['lo']:+.3f}, {fsa['hi']:+.3f}]"
        + (
            f" (significant: the {unit} test is flagged after BH, adjusted p {fsa['p_adj']:.3g})"
            if fsa["significant"]
            else f" (not significant: the {unit} test's BH-adjusted p is {fsa.get('p_adj', 1.0):.3g})"
        )
        + "</p>"
    )
    parts.append(
        _table(
            ["seat", "wins", "win rate [95% CI]", "vs fair", ""],
            [
                [s["seat"], s["wins"], _interval(s), f"{s['delta']:+.3f}", _mark(s["outside"])]
                for s in cell["seats"]
            ],
            frozenset({4}),
        )
    )
    if cell.get("teams"):
        parts.append("<h4>By team (partners win together: the team is the unit of the test)</h4>")
        parts.append(
            _table(
                ["team", "seats", "wins", "win rate [95% CI]", "vs fair", ""],
                [
                    [
                        t["team"],
                        "+".join(map(str, t["seats"])),
                        t["wins"],
                        _interval(t),
                        f"{t['delta']:+.3f}",
                        _mark(t["outside"]),
                    ]
                    for t in cell["teams"]
                ],
                frozenset({5}),
            )
        )
    if cell["bots"]:
        parts.append("<h4>By bot (seats rotated)</h4>")
        parts.append(
            _table(
                ["bot", "seat-games", "win rate [95% CI]", "vs fair", ""],
                [
                    [b["bot"], b["appearances"], _interval(b), f"{b['delta']:+.3f}", _mark(b["outside"])]
                    for b in cell["bots"]
                ],
                frozenset({4}),
            )
        )
    for name, rows in cell["groups"].items():
        parts.append(f"<h4>By {_e(name)}</h4>")
        parts.append(
            _table(
                [name, "seat-games", "win rate [95% CI]", "vs fair", ""],
                [
                    [g["label"], g["appearances"], _interval(g), f"{g['delta']:+.3f}", _mark(g["outside"])]
                    for g in rows
                ],
                frozenset({4}),
            )
        )
    if cell["played"]:
        parts.append("<h4>Cards / agendas played</h4>")
        parts.append(
            _table(
                ["played", "games", "play rate [95% CI]", "plays", "win when played [95% CI]", ""],
                [
                    [
                        p["label"],
                        p["games"],
                        _interval(p["play_rate"]),
                        p["plays"],
                        _interval(p["win_when_played"]),
                        _mark(p["win_when_played"]["outside"]),
                    ]
                    for p in cell["played"]
                ],
                frozenset({5}),
            )
        )
    if cell.get("outcomes"):
        parts.append("<h4>Agenda success</h4>")
        parts.append(
            _table(
                ["agenda", "kept", "met", "success rate [95% CI]"],
                [[o["label"], o["trials"], o["wins"], _interval(o)] for o in cell["outcomes"]],
            )
        )
    length = cell["length"]
    parts.append(
        f"<p>Length (turns): mean {length['mean']:.1f} [{length['lo']:.1f}, {length['hi']:.1f}], median "
        f"{length['median']:.0f}, 10-90% {length['p10']:.0f}-{length['p90']:.0f}, range {length['min']}-{length['max']}</p>"
    )
    parts.append(
        _table(
            ["test", "chi-square", "df", "p", "BH-adjusted p", "flag", "smallest detectable"],
            [
                [
                    n,
                    t["chi2"],
                    t["df"],
                    f"{t['p']:.4g}",
                    f"{t['p_adj']:.4g}" if t["balance"] else "bot strength: not in BH",
                    "FLAG" if t["flag"] else "",
                    _mde(t.get("mde")),
                ]
                for n, t in cell["tests"].items()
            ],
        )
    )
    parts.append(f"<p>Representative game: {_replay_links(cell['representative'], replay_base, local)}</p>")
    return "\n".join(parts)


def _paired_section(rows: list[dict[str, Any]]) -> str:
    """Each variant against the base rules on the same seeds, significant comparisons first."""
    parts = ["<h2>Variants against the base rules (same seeds, paired)</h2>"]
    if not rows:
        parts.append("<p>No grid cell has a base cell to compare with (one grid entry).</p>")
        return "\n".join(parts)
    parts.append(
        "<p>Each cell against the cell with the same players and line-up under the first grid entry, "
        "game by game on the same seeds. Win rates (per seat or team, per cult...) and card play rates "
        "are shares of games: McNemar's test on the games whose outcome differs and the paired 95% "
        "interval of the difference. Mean game length: the paired t-test on the per-seed differences. "
        "Every p is adjusted in the report's one BH family.</p>"
    )
    ordered_rows = sorted(rows, key=lambda r: (not r["significant"], r["p_adj"], r["cell"]))
    parts.append(
        _table(
            ["", "comparison", "games", "test", "smallest detectable"],
            [
                [
                    "<b class=flag>significant</b>" if r["significant"] else "",
                    _e(r["sentence"]),
                    r["games"],
                    r["test"],
                    _mde(r.get("mde"), r.get("kind") == "turns"),
                ]
                for r in ordered_rows
            ],
            frozenset({0}),
        )
    )
    return "\n".join(parts)


STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}
th{background:#f3f3f3}.flag{color:#b00020}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
"""


def render_html(
    summary: dict[str, Any], images: dict[str, bytes], inline: bool = False, replay_base: str = ""
) -> str:
    agg = summary["aggregates"]
    run = summary.get("run", {})

    def img(name: str) -> str:
        if inline:
            src = "data:image/png;base64," + base64.b64encode(images[name]).decode()
        else:
            src = f"plots/{name}"
        return f'<img src="{src}" alt="{_e(name)}">'

    local = not inline
    flagged_cells = [c for c in agg["cells"] if c["flagged"]]
    out = [
        "<!doctype html><html><head><meta charset=utf-8>",
        f"<title>Sweep {_e(summary['name'])}</title><style>{STYLE}</style></head><body>",
        f"<h1>Balance sweep: {_e(summary['name'])}</h1>",
        f"<p class=verdict><b>{_e(agg.get('verdict', ''))}</b></p>",
        f"<p>Game {_e(agg['game'])} · {agg['games_counted']:,} of {agg['games_requested']:,} games · "
        f"{len(agg['cells'])} cells · seed {summary['spec']['seed']} · "
        f"{run.get('mode', '?')} run in {run.get('seconds', 0):.1f} s ({run.get('games_per_second', 0):,.0f} games/s)</p>",
        f"<p>Tests: one Benjamini-Hochberg family of {agg['tests']['family_size']} tests "
        f"({agg['tests'].get('paired_in_family', 0)} of them paired comparisons with the base cells) "
        f"at q = {agg['tests']['q']}; {len(agg['tests']['flagged'])} flagged. "
        "Significant means flagged in this family; <i>outside</i> only means a rate's own interval "
        "misses the fair share.</p>",
        "<h2>Flagged cells</h2>",
    ]
    records = summary.get("records")
    if records:
        out.insert(
            -1,
            f"<p>Per-game records ({records['games']:,} games, Parquet by cell, sorted by seed): "
            f"<code>{_e(records['path'])}</code></p>",
        )
    if flagged_cells:
        out.append(
            _table(
                ["cell", "flags", "replay"],
                [
                    [
                        f'<a href="#cell-{c["cell"]}">{_e(c["label"])}</a>',
                        _e(", ".join(c["flags"])),
                        _replay_links(c["representative"], replay_base, local),
                    ]
                    for c in flagged_cells
                ],
                frozenset({0, 1, 2}),
            )
        )
    else:
        out.append("<p>None: no test of any cell, its paired comparisons included, is significant.</p>")
    skipped = agg.get("skipped_cells", [])
    if skipped:
        out.append(
            f"<h2>Skipped cells</h2><p>{len(skipped)} cell{'s' if len(skipped) != 1 else ''} played no games: "
            "their override leaves the game of their player count unchanged.</p>"
            + _table(["cell", "why"], [[s["label"], s["reason"]] for s in skipped])
        )
    out.append(_paired_section(agg.get("paired", [])))
    out.append(_power_section(agg.get("power")))
    out.append("<h2>Win rate by seat</h2>" + img("seat_rates.png"))
    out.append("<h2>Variants</h2>" + img("variant_heatmap.png"))
    out.append(
        _table(
            [
                "variant",
                "players",
                "games",
                "fair share",
                "seat rates",
                "draws",
                "turn cap",
                "mean turns",
                "seat/team test p (unadjusted, not in BH)",
            ],
            [
                [
                    v["variant"],
                    v["players"],
                    v["games"],
                    _pct(v["fair_share"]),
                    " ".join(_pct(s["rate"]) for s in v["seats"]),
                    _pct(v["draws"]["rate"]),
                    _pct(v["capped"]["rate"]),
                    f"{v['mean_turns']:.1f}",
                    f"{v['test']['p']:.4g}",
                ]
                for v in agg["variants"]
            ],
        )
    )
    out.append("<h2>Game length</h2>" + img("game_lengths.png"))
    out.append(cards_html(summary.get("cards"), _e))
    out.append("<h2>Cells</h2>")
    out.extend(_cell_section(c, replay_base, local) for c in agg["cells"])
    out.append("</body></html>")
    return "\n".join(out)


def replay_page(record: dict[str, Any], record_name: str) -> str:
    """One game of the sweep, move by move, as a page that needs nothing but the file: the
    record replayed with the rules (`apply` checks every move, as `cultists replay` does)
    and each move's words."""
    spec = load_game(record["game"])
    state = spec.new_state(
        spec.make_config(record.get("config") or {}),
        record["players"],
        record["seed"],
        None,
        record.get("shuffle"),
    )
    rows = []
    for n, (seat, action) in enumerate(record["actions"]):
        rows.append([n + 1, seat, state.action_label(action)])
        state.apply(seat, action)
    won = ", ".join(f"seat {s}" for s in state.winners()) if state.is_terminal() else ""
    outcome = (f"won by {won}" if won else "a draw") if state.is_terminal() else "not over"
    bots = ", ".join(f"seat {s}: {b}" for s, b in enumerate(record.get("bots", [])))
    return "\n".join([
        "<!doctype html><html><head><meta charset=utf-8>",
        f"<title>{_e(spec.title)}, seed {record['seed']}</title><style>{STYLE}</style></head><body>",
        f"<h1>{_e(spec.title)}, {record['players']} players, seed {record['seed']}</h1>",
        f"<p>{_e(bots)} · {len(record['actions'])} moves, {state.turn} turns, {_e(outcome)}. "
        f'Record: <a href="{_e(record_name)}">{_e(record_name)}</a> '
        f"(<code>cultists replay {_e(record_name)} --steps</code> replays it in a terminal).</p>",
        _table(["move", "seat", "what"], rows),
        "</body></html>",
    ])  # fmt: skip


def write_csv(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write per-game rows; columns are the union of the first row's keys (facts columns included)."""
    count = 0
    rows = iter(rows)
    first = next(rows, None)
    with path.open("w", newline="") as fh:
        if first is None:
            return 0
        writer = csv.DictWriter(fh, fieldnames=list(first), extrasaction="ignore", restval="")
        writer.writeheader()
        writer.writerow(first)
        count = 1
        for row in rows:
            writer.writerow(row)
            count += 1
    return count


def write_report(
    out_dir: str | Path,
    summary: dict[str, Any],
    rows: Iterable[dict[str, Any]] | None,
    replays: dict[int, dict[str, Any]],
    replay_base: str = "",
) -> Path:
    """Write the whole report directory; returns the path of report.html. `rows` None: no
    per-game files here (the sweep's records were written elsewhere: summary["records"])."""
    out = Path(out_dir)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    (out / "replays").mkdir(exist_ok=True)
    images = render_all(summary["aggregates"])
    for name, data in images.items():
        (out / "plots" / name).write_bytes(data)
    for cell, record in replays.items():
        (out / "replays" / f"cell-{cell}.json").write_bytes(orjson.dumps(record) + b"\n")
        (out / "replays" / f"cell-{cell}.html").write_text(replay_page(record, f"cell-{cell}.json"))
    if rows is not None:
        write_game_records(out, rows, csv_too=summary["aggregates"]["games_counted"] <= CSV_MAX_GAMES)
        summary.setdefault("cards", report_of_folder(out / "games"))  # cards.py, from the records
    (out / "summary.json").write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
    page = out / "report.html"
    page.write_text(render_html(summary, images, inline=False, replay_base=replay_base))
    return page
