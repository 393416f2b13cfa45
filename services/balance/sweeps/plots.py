"""The report's three PNG plots, drawn with matplotlib's Agg backend (no display needed).

1. Win rate by seat with Wilson interval bars, one panel per player count, one bar colour
   per cell, the fair share as a dashed line: is any seat out of its interval?
2. Variant x seat heatmap of the distance from the fair share, one panel per player count
   (pooled over line-ups), on a diverging scale centred on zero: which rule set tilts
   which seat, and how far; a star marks what is significant after BH.
3. Game-length histograms, one panel per player count, one step line per cell: did a
   variant make games drag, or hit the turn cap?

Each function takes the aggregates dict only, so a report can be redrawn from a saved
summary without the games.
"""

from __future__ import annotations

import io
import textwrap
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # the backend must be chosen first


def _by_players(items: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for item in items:
        out.setdefault(item["players"], []).append(item)
    return dict(sorted(out.items()))


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def seat_rates(aggregates: dict[str, Any]) -> bytes:
    groups = _by_players(aggregates["cells"])
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 4), squeeze=False)
    for ax, (players, cells) in zip(axes[0], groups.items(), strict=True):
        width = 0.8 / len(cells)
        for i, cell in enumerate(cells):
            xs = [s["seat"] + (i - (len(cells) - 1) / 2) * width for s in cell["seats"]]
            rates = [s["rate"] for s in cell["seats"]]
            err = [[s["rate"] - s["lo"] for s in cell["seats"]], [s["hi"] - s["rate"] for s in cell["seats"]]]
            label = f"{cell['variant']} / {cell['lineup_label']}"
            ax.bar(xs, rates, width=width, yerr=err, capsize=3, label=label)
            ax.hlines(
                cell["fair_share"], -0.5, players - 0.5, linestyles="dashed", colors="grey", linewidth=1
            )
        ax.set_title(f"{players} players: win rate by seat (95% Wilson)")
        ax.set_xticks(range(players))
        ax.set_xlabel("seat")
        ax.set_ylabel("win rate")
        ax.set_ylim(0, 1)
        if len(cells) <= 8:
            ax.legend(fontsize=7)
    return _png(fig)


LABEL_WIDTH = 26  # characters a variant label's line holds before it wraps


def significant_seats(aggregates: dict[str, Any]) -> set[tuple[str, int, int]]:
    """(variant, players, seat) whose rate is significant after BH: a seat outside its
    interval in a cell whose seat test is flagged, or a seat whose paired win rate against
    the base cell is. Team games mark the seats of a flagged team."""
    marked: set[tuple[str, int, int]] = set()
    for c in aggregates.get("cells", []):
        tests = c.get("tests", {})
        if tests.get("seat", {}).get("flag"):
            marked |= {(c["variant"], c["players"], s["seat"]) for s in c["seats"] if s.get("outside")}
        if tests.get("team", {}).get("flag"):
            for t in c.get("teams", []):
                if t.get("outside"):
                    marked |= {(c["variant"], c["players"], seat) for seat in t["seats"]}
    for row in aggregates.get("paired", []):
        metric = row.get("metric", "")
        if row.get("significant") and metric.startswith("seat ") and metric.endswith(" win rate"):
            marked.add((row["variant"], row["players"], int(metric.split()[1])))
    return marked


def variant_heatmap(aggregates: dict[str, Any]) -> bytes:
    return _png(heatmap_figure(aggregates))


def heatmap_figure(aggregates: dict[str, Any]) -> Any:
    """Variant x seat, win rate minus fair share; `*` marks a significant seat (BH). Long
    variant labels wrap, and the figure grows with them, so no label runs into another."""
    groups = _by_players(aggregates["variants"])
    marked = significant_seats(aggregates)
    labels = {
        players: [textwrap.fill(row["variant"], LABEL_WIDTH) or "base" for row in rows]
        for players, rows in groups.items()
    }
    lines = max(label.count("\n") + 1 for group in labels.values() for label in group)
    widest = max(
        min(LABEL_WIDTH, max(len(x) for x in label.split("\n"))) for g in labels.values() for label in g
    )
    rows_most = max(len(v) for v in groups.values())
    fig, axes = plt.subplots(
        1,
        len(groups),
        figsize=(
            sum(max(3.5, 1.1 * p) + 0.09 * widest + 1.2 for p in groups),
            1.8 + 0.32 * lines * rows_most,
        ),
        squeeze=False,
        layout="constrained",
    )
    for ax, (players, rows) in zip(axes[0], groups.items(), strict=True):
        data = [[s["delta"] for s in row["seats"]] for row in rows]
        limit = max(0.05, max(abs(v) for line in data for v in line))
        image = ax.imshow(data, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        for r, (row, line) in enumerate(zip(rows, data, strict=True)):
            for s, v in enumerate(line):
                star = "*" if (row["variant"], players, s) in marked else ""
                ax.text(s, r, f"{v:+.3f}{star}", ha="center", va="center", fontsize=8,
                        fontweight="bold" if star else "normal")  # fmt: skip
        ax.set_xticks(range(players))
        ax.set_xlabel("seat")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(labels[players], fontsize=8)
        ax.set_title(f"{players} players: win rate - fair share", fontsize=9)
        fig.colorbar(image, ax=ax, shrink=0.8)
    fig.suptitle("* significant after Benjamini-Hochberg (the seat's test, or its paired change)", fontsize=8)
    return fig


def length_histograms(aggregates: dict[str, Any]) -> bytes:
    groups = _by_players(aggregates["cells"])
    fig, axes = plt.subplots(1, len(groups), figsize=(5.5 * len(groups), 3.6), squeeze=False)
    for ax, (players, cells) in zip(axes[0], groups.items(), strict=True):
        for cell in cells:
            hist = cell["length"]["histogram"]
            if not hist["counts"]:
                continue
            total = sum(hist["counts"])
            ax.stairs(
                [c / total for c in hist["counts"]],
                hist["edges"],
                label=f"{cell['variant']} / {cell['lineup_label']}",
            )
        ax.set_title(f"{players} players: game length")
        ax.set_xlabel("turns")
        ax.set_ylabel("share of games")
        if len(cells) <= 8:
            ax.legend(fontsize=7)
    return _png(fig)


PLOTS = {
    "seat_rates.png": seat_rates,
    "variant_heatmap.png": variant_heatmap,
    "game_lengths.png": length_histograms,
}


def render_all(aggregates: dict[str, Any]) -> dict[str, bytes]:
    return {name: draw(aggregates) for name, draw in PLOTS.items()}
