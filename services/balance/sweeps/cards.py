"""Which cards each seat drew, held and played, and what holding a card goes with (correlational).

"Is this card too strong?" starts with who had it. A game's end state does not say (hands
are spent, swapped and stolen), so a sweep game of a game with a card catalogue is played
with its hands observed after the deal and after every decision (`play_tracked`): per
seat, the cards it held when play began (its **opening** hand), the copies that reached its
hand from a draw or the deal (**drawn**: a copy not held by another seat just before), and
every card it **held** at any point (drawn, stolen or passed to it). The observation only
reads `state.hands`, a documented field of the state's JSON form (docs/state-json.md), so
the game played is exactly the one `play_to_end` plays (the same decisions, the same
seeds): replays and records of the same seed agree.

The per-game record (`facts["cards"]`, then the Parquet columns `opening`, `drawn`,
`held`) has the shape of `played`: label -> seats, written `label=0,2|label2=1`.

`card_report` turns records into the correlational table: per cell and pooled over cells,
for each card and each of opening / drawn / held / played, the win rate of the seat-games
with the card against those without, with Wilson intervals, the difference with Newcombe's
interval and the score test, one Benjamini-Hochberg family over the whole table, ranked.
These contrasts are confounded (a seat in a longer game draws and plays more cards; a
card fits one cult better than another), so every row that can be says so in words; the
causal answer is the ablation (`ablation.py`).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from services.engines.core import stats
from services.engines.core.game import GameSpec, State
from services.engines.core.play import GameRecord, play_to_end
from services.engines.registry import GAMES, has_part, load_part

CONTRASTS = ("opening", "drawn", "held", "played")
TRACKED = ("opening", "drawn", "held")
FDR_Q = 0.05
DIGITS = 6
# A contrast whose games with the card last this much longer (or shorter) than without is
# called confounded by length in words (10 %).
LENGTH_CONFOUND = 0.10
# The report reads a sweep's records into memory: past this many games it says so instead.
REPORT_MAX_GAMES = int(os.environ.get("CARD_REPORT_MAX_GAMES", "500000"))


@dataclass(frozen=True, eq=False)  # hashed by identity: its labels are cached per config
class CardCatalogue:
    """What the balance layer knows of a game's cards: each card id's label under a config
    (the labels `played` uses), and the config field that holds each label's count."""

    labels_of: Callable[[Any], Sequence[str]]  # config -> label of each card id
    count_fields: Mapping[str, str]  # label -> config field of its count

    def labels(self, config: Any) -> Sequence[str]:
        return _cached_labels(self, config)


@lru_cache(maxsize=256)
def _cached_labels(catalogue: CardCatalogue, config: Any) -> tuple[str, ...]:
    return tuple(catalogue.labels_of(config))


# Game -> its catalogue (None: it has none), built once from the game's own package: its
# `sweep_facts.py` may declare `card_labels(config)` (each card id's label) and
# `CARD_COUNT_FIELDS` (label -> config field of its count). Tricky Cultists' cards are
# suits and ranks dealt whole each round (TK-1): no count to change, no card to hold for
# longer; it declares none.
_CATALOGUES: dict[str, CardCatalogue | None] = {}


def catalogue(game: str) -> CardCatalogue | None:
    if game not in _CATALOGUES:
        found = None
        if game in GAMES and has_part(game, "sweep_facts"):
            part = load_part(game, "sweep_facts")
            if hasattr(part, "card_labels"):
                found = CardCatalogue(part.card_labels, part.CARD_COUNT_FIELDS)
        _CATALOGUES[game] = found
    return _CATALOGUES[game]


class _Watch:
    """Per seat, the card ids seen in its hand: opening, drawn, ever held.

    Every hand is looked at after the deal and at the end; between, only the hand of the
    seat about to decide (one hand a decision, not all of them: the look costs a fraction
    of the game). A card counts as held by a seat once seen in its hand at one of its own
    decisions, which is every card it could have played; one that came and went between
    two of them (a hand passed on twice in a row) is missed."""

    def __init__(self, players: int) -> None:
        self.held: list[set[int]] = [set() for _ in range(players)]
        self.drawn: list[set[int]] = [set() for _ in range(players)]
        self.opening: list[list[int]] | None = None
        self.seen: set[int] = set()  # card ids seen in any hand so far

    def look(self, hand: Sequence[int], s: int) -> None:
        held = self.held[s]
        seen = self.seen
        for c in hand:
            if c not in held:
                held.add(c)
                if c not in seen:  # in no hand before (a deck, the deal, a pile): drawn
                    seen.add(c)
                    self.drawn[s].add(c)

    def look_all(self, state: State) -> None:
        hands = state.hands  # type: ignore[attr-defined]
        for s, hand in enumerate(hands):
            self.look(hand, s)
        if self.opening is None and state.turn >= 1:
            self.opening = [list(h) for h in hands]

    def facts(self, labels: Sequence[str]) -> dict[str, dict[str, list[int]]]:
        def by_label(per_seat: Sequence[Iterable[int]]) -> dict[str, list[int]]:
            out: dict[str, set[int]] = defaultdict(set)
            for s, ids in enumerate(per_seat):
                for c in ids:
                    out[labels[c]].add(s)
            return {k: sorted(v) for k, v in sorted(out.items())}

        return {
            "opening": by_label(self.opening or []),
            "drawn": by_label(self.drawn),
            "held": by_label(self.held),
        }


def play_tracked(
    spec: GameSpec,
    config: Any,
    players: int,
    seed: int,
    bot_specs: Sequence[str],
    record_actions: bool,
    shuffle: str | int | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[State, GameRecord, dict[str, Any]]:
    """`play_to_end` with every seat's hand looked at after the deal and before each of
    its decisions: the same game (cancelled the same way, by `stop`), plus its cards facts
    (opening, drawn, held by seat)."""
    cat = catalogue(spec.name)
    if cat is None:
        raise KeyError(f"{spec.name} has no card catalogue")
    watch = _Watch(players)

    def look(state: State, seat: int) -> None:
        if watch.opening is None:
            watch.look_all(state)  # the deal may follow a setup phase (Trash Cult's cults)
        watch.look(state.hands[seat], seat)  # type: ignore[attr-defined]

    state, record = play_to_end(
        spec, config, players, seed, bot_specs, record_actions, None, shuffle, stop=stop, look=look
    )
    watch.look_all(state)
    return state, record, watch.facts(cat.labels(state.config))


# -- the records' columns ------------------------------------------------------------------
def encode(by_label: Mapping[str, Sequence[int]]) -> str:
    """label -> seats as the records' text column: `label=0,2|label2=1`."""
    return "|".join(f"{lab}={','.join(map(str, seats))}" for lab, seats in by_label.items())


def decode(text: str | None) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for part in (text or "").split("|"):
        if not part:
            continue
        label, _, seats = part.rpartition("=")
        out[label] = [int(s) for s in seats.split(",") if s]
    return out


def record_columns(fact: Mapping[str, Any]) -> dict[str, str]:
    """The cards columns of one game's record row, from its facts (none without tracking)."""
    cards = fact.get("cards")
    if not cards:
        return {}
    return {name: encode(cards.get(name, {})) for name in TRACKED}


# -- the correlational report --------------------------------------------------------------
@dataclass
class _Tally:
    """Seat-games with and without a card: trials, wins and summed turns of each side."""

    n_with: int = 0
    w_with: int = 0
    t_with: int = 0
    n_without: int = 0
    w_without: int = 0
    t_without: int = 0


def _games(rows: Iterable[Mapping[str, Any]]) -> Iterable[dict[str, Any]]:
    for row in rows:
        yield {
            "cell": row.get("cell"),
            "label": f"{row.get('variant', '')} | {row.get('players')}p",
            "players": int(row["players"]),
            "winners": list(row["winners"] or []),
            "turns": int(row["turns"]),
            "sets": {name: decode(row.get(name)) for name in CONTRASTS},
        }


def has_tracking(columns: Iterable[str]) -> bool:
    return all(name in set(columns) for name in TRACKED)


MISSING = (
    "these records hold no drawn/held data (a sweep recorded before card tracking, or a game "
    "without a card catalogue): only play rates are known, so no card report is given"
)


def card_report(
    rows: Iterable[Mapping[str, Any]], columns: Iterable[str], cards: Iterable[str] = ()
) -> dict[str, Any]:
    """The card report of a sweep's records (`rows`: dicts with the record columns).

    Per cell and pooled over cells: for each card and each contrast (opening, drawn, held,
    played), the seat-games with the card against those without. Records without the
    tracking columns give `{"available": False, "reason": ...}`, never a table of zeros."""
    if not has_tracking(columns):
        return {"available": False, "reason": MISSING, "rows": []}
    # Only the seat-games *with* a card are counted card by card; those without are each
    # cell's totals minus them, so a game costs its holders, not cards x seats.
    tallies: dict[tuple[Any, str, str], _Tally] = defaultdict(_Tally)
    totals: dict[Any, list[int]] = defaultdict(lambda: [0, 0, 0])  # seat-games, wins, turns
    labels: dict[Any, str] = {}
    known: set[str] = set(cards)
    for game in _games(rows):
        labels[game["cell"]] = game["label"]
        n, turns, winners = game["players"], game["turns"], game["winners"]
        for cell in (game["cell"], "pooled"):
            tot = totals[cell]
            tot[0] += n
            tot[1] += len(winners)
            tot[2] += n * turns
        for name in CONTRASTS:
            for card, holders in game["sets"][name].items():
                known.add(card)
                wins = sum(1 for s in holders if s in winners)
                for cell in (game["cell"], "pooled"):
                    t = tallies[(cell, card, name)]
                    t.n_with += len(holders)
                    t.w_with += wins
                    t.t_with += len(holders) * turns
    for cell, (n, w, turns) in totals.items():
        for card in known:
            for name in CONTRASTS:
                t = tallies[(cell, card, name)]
                t.n_without, t.w_without, t.t_without = n - t.n_with, w - t.w_with, turns - t.t_with
    out_rows = []
    for (cell, card, name), t in tallies.items():
        if t.n_with == 0 or t.n_without == 0:
            continue
        comp = stats.independent_rates(t.w_without, t.n_without, t.w_with, t.n_with)
        lo_w, hi_w = stats.wilson(t.w_with, t.n_with)
        lo_o, hi_o = stats.wilson(t.w_without, t.n_without)
        mean_with, mean_without = t.t_with / t.n_with, t.t_without / t.n_without
        out_rows.append(
            {
                "cell": cell,
                "table": "pooled over cells" if cell == "pooled" else labels.get(cell, str(cell)),
                "card": card,
                "contrast": name,
                "with": {
                    "wins": t.w_with,
                    "trials": t.n_with,
                    "rate": _r(t.w_with / t.n_with),
                    "lo": _r(lo_w),
                    "hi": _r(hi_w),
                },
                "without": {
                    "wins": t.w_without,
                    "trials": t.n_without,
                    "rate": _r(t.w_without / t.n_without),
                    "lo": _r(lo_o),
                    "hi": _r(hi_o),
                },
                "difference": _r(comp.difference),
                "lo": _r(comp.lo),
                "hi": _r(comp.hi),
                "p": comp.p,
                "test": comp.test,
                "mean_turns_with": _r(mean_with),
                "mean_turns_without": _r(mean_without),
                "confounds": _confounds(name, mean_with, mean_without),
            }
        )
    if out_rows:
        rejected, adjusted = stats.benjamini_hochberg([r["p"] for r in out_rows], FDR_Q)
        for r, rej, adj in zip(out_rows, rejected, adjusted, strict=True):
            r["p_adj"], r["significant"] = adj, bool(rej)
            r["text"] = _sentence(r)
    out_rows.sort(
        key=lambda r: (
            r["cell"] != "pooled",
            not r["significant"],
            -abs(r["difference"]),
            r["card"],
            r["contrast"],
        )
    )
    pooled = [r for r in out_rows if r["cell"] == "pooled"]
    ranking: list[dict[str, Any]] = []
    for r in pooled:  # one line per card: its largest significant contrast, else its largest
        if r["card"] not in {x["card"] for x in ranking}:
            ranking.append({"card": r["card"], "contrast": r["contrast"], "difference": r["difference"],
                            "significant": r["significant"], "text": r["text"]})  # fmt: skip
    return {
        "available": True,
        "unit": "seat-game",
        "family": {"method": "benjamini-hochberg", "q": FDR_Q, "size": len(out_rows)},
        "ranking": ranking,
        "rows": out_rows,
        "warning": WARNING,
    }


WARNING = (
    "These are correlations, not causes. A seat that holds or plays a card also differs in "
    "other ways: longer games deal more cards and give more chances to play them; a card "
    "suits one cult, or one bot, better than another; a card that is played when it wins the "
    "game (a finishing move) looks strong because winning made it playable. The opening-hand "
    "contrast is the least confounded (the deal is random and comes before any decision). "
    "For the causal answer run the ablation: `cultists cards SPEC`."
)


def _confounds(contrast: str, mean_with: float, mean_without: float) -> list[str]:
    out = []
    if mean_without and abs(mean_with / mean_without - 1) > LENGTH_CONFOUND:
        longer = "longer" if mean_with > mean_without else "shorter"
        out.append(
            f"games with it are {longer} ({mean_with:.1f} against {mean_without:.1f} turns): "
            "the contrast mixes the card with game length"
        )
    if contrast == "played":
        out.append("playing depends on the game's course (a card is played more when it can win)")
    elif contrast in ("drawn", "held"):
        out.append("holding more cards comes with longer games and with stealing")
    return out


def _sentence(r: Mapping[str, Any]) -> str:
    what = {"opening": "in the opening hand", "drawn": "drawn", "held": "ever held", "played": "played"}[
        r["contrast"]
    ]
    verdict = "significant" if r["significant"] else "not significant"
    warn = f" Confounded: {'; '.join(r['confounds'])}." if r["confounds"] else ""
    return (
        f"{r['table']}: {r['card']} {what}: its seat wins {100 * r['with']['rate']:.1f}% against "
        f"{100 * r['without']['rate']:.1f}% without ({100 * r['difference']:+.1f} points, 95% interval "
        f"{100 * r['lo']:+.1f} to {100 * r['hi']:+.1f}, adjusted p {r['p_adj']:.2g}: {verdict}).{warn}"
    )


def _r(x: float) -> float:
    return round(x, DIGITS)


def read_records(folder: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """Every row and the column names of a `games/` records folder (records.py)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(folder, format="parquet", partitioning="hive")
    table = dataset.to_table()
    return table.to_pylist(), list(table.column_names)


def report_of_folder(folder: Any) -> dict[str, Any]:
    """The card report of a `games/` records folder; a folder that is not there, or holds
    no games, says so (`available: False`)."""
    from pathlib import Path

    import pyarrow.dataset as ds

    if not Path(folder).is_dir():
        return {"available": False, "reason": f"no per-game records at {folder}", "rows": []}
    games = ds.dataset(folder, format="parquet", partitioning="hive").count_rows()
    if games > REPORT_MAX_GAMES:
        return {
            "available": False,
            "reason": f"{games:,} games: the card report reads at most {REPORT_MAX_GAMES:,} "
            "(CARD_REPORT_MAX_GAMES); read the records' opening/drawn/held columns directly",
            "rows": [],
        }
    rows, columns = read_records(folder)
    if not rows:
        return {"available": False, "reason": "the records hold no games", "rows": []}
    return card_report(rows, columns)


def report_html(report: Mapping[str, Any] | None, escape: Callable[[str], str], limit: int = 40) -> str:
    """The sweep report's section "Cards: who wins with them" (correlational)."""
    if not report:
        return ""
    out = ["<h2>Cards: who wins with them (correlational)</h2>"]
    if not report.get("available"):
        return out[0] + f"<p>{escape(report.get('reason', ''))}</p>"
    out.append(f"<p class=flag>{escape(report['warning'])}</p>")
    out.append(
        f"<p>Unit: a seat in a game. One Benjamini-Hochberg family of {report['family']['size']} contrasts "
        f"at q = {report['family']['q']}. Cards ranked by their largest pooled contrast:</p><ol>"
    )
    out.extend(f"<li>{escape(r['text'])}</li>" for r in report["ranking"])
    out.append("</ol><table><tr><th>table</th><th>card</th><th>contrast</th><th>with</th><th>without</th>"
               "<th>difference (95%)</th><th>adjusted p</th></tr>")  # fmt: skip
    for r in report["rows"][:limit]:
        out.append(
            f"<tr><td>{escape(r['table'])}</td><td>{escape(r['card'])}</td><td>{r['contrast']}</td>"
            f"<td>{100 * r['with']['rate']:.1f}% of {r['with']['trials']}</td>"
            f"<td>{100 * r['without']['rate']:.1f}% of {r['without']['trials']}</td>"
            f"<td>{100 * r['difference']:+.1f} ({100 * r['lo']:+.1f} to {100 * r['hi']:+.1f})</td>"
            f"<td{' class=flag' if r['significant'] else ''}>{r['p_adj']:.3g}</td></tr>"
        )
    out.append("</table>")
    if len(report["rows"]) > limit:
        out.append(
            f"<p>{len(report['rows']) - limit} more rows in summary.json (<code>cards.rows</code>).</p>"
        )
    return "\n".join(out)
