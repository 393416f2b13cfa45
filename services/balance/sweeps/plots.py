"""The report's three PNG plots, drawn with matplotlib's Agg backend (no display needed).

1. Win rate by seat with Wilson interval bars, one panel per player count, one bar colour
   per cell, the fair share as a dashed line: is any seat out of its interval?
2. Variant x seat heatmap of the distance from the fair share, one panel per player count
   (pooled over line-ups), on a diverging scale centred on zero: which rule set tilts
   which seat, and how far.
3. Game-length histograms, one panel per player count, one step line per cell: did a
   variant make games drag, or hit the turn cap?

Each function takes the aggregates dict only, so a report can be redrawn from a saved
summary without the games.
"""

from __future__ import annotations

import io
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


def variant_heatmap(aggregates: dict[str, Any]) -> bytes:
    groups = _by_players(aggregates["variants"])
    fig, axes = plt.subplots(
        1, len(groups), figsize=(max(4, 1.3 * max(groups)) * len(groups), 1.5 + 0.5 * max(len(v) for v in groups.values())),
        squeeze=False,
    )  # fmt: skip
    for ax, (players, rows) in zip(axes[0], groups.items(), strict=True):
        data = [[s["delta"] for s in row["seats"]] for row in rows]
        limit = max(0.05, max(abs(v) for line in data for v in line))
        image = ax.imshow(data, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
        for r, line in enumerate(data):
            for s, v in enumerate(line):
                ax.text(s, r, f"{v:+.3f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(players))
        ax.set_xlabel("seat")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([row["variant"] for row in rows], fontsize=8)
        ax.set_title(f"{players} players: win rate - fair share")
        fig.colorbar(image, ax=ax, shrink=0.8)
    return _png(fig)


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
