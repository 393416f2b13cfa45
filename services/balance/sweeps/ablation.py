"""Card ablation: change one card's count, play the same seeds again, and see what its holder gains.

The card report (cards.py) says who won when they held a card; that is a correlation. The
ablation is the experiment: a sweep whose base cell is the rules as given, and one cell per
card and change, the card's count -1 or +1 (or the card removed), everything else equal, on
the same seeds (every cell plays game i with seed `seed + i`). For each cell the effect is:

- `-1` / `+1`: the change in **its holders' win rate** (the share of seat-games holding the
  card that were won), the variant's holders against the base's;
- `remove`: the change in the win rate of **the seats that held it under base**, the same
  seats in the variant game of the same seed (no one holds it in the variant).

A ratio of sums over games, so its interval comes from the delta method with the game (the
seed) as the unit: each seed's linearised contribution pairs its base and variant games,
so the seed-to-seed variation the two share cancels (a paired analysis; coupled deals make
the pairing tighter still). 95 % normal interval, two-sided z test, Benjamini-Hochberg over
every row of the report (q = 0.05), cards ranked by their largest significant effect.

The spec (`cultists cards SPEC`, `POST /api/cards`) is a sweep spec's table with the cards:

    game: trash_cult
    games: 400                     # per cell
    players: [2]
    cards: [Protection Spell, Hide]    # default: every card the game's catalogue counts
    changes: [-1, 1]               # or [remove]; any of -1, 1, remove

An unknown card, or a count the game refuses (a negative count, a deck too small to deal)
is refused before any game is played, naming `cards.<i>`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeAlias

from pydantic import Field

from services.engines.core import stats
from services.engines.core.errors import BadConfig
from services.models import one_of

from .cards import catalogue, decode, has_tracking
from .spec import (
    MAX_TOTAL_GAMES,
    SpecError,
    SweepSpec,
    TableSpecInput,
    parse_spec,
    read_spec,
    read_spec_file,
    variant_label,
)

FDR_Q = 0.05
DIGITS = 6
# Two literals of one type each: a client generator reads an enum of one type (one mixing
# numbers and a string is refused by openapi-python-client). Chosen by the input's kind
# (`one_of`), so a refusal names the field itself ('changes.0'), not a member of the union.
if TYPE_CHECKING:
    Change: TypeAlias = Literal[-1, 1] | Literal["remove"]
else:
    Change = one_of(
        "a change is -1, 1 or 'remove'",
        step=(Literal[-1, 1], (int,)),
        remove=(Literal["remove"], (str,)),
    )


class CardsSpecInput(TableSpecInput):
    """An ablation spec as written (a file, or the body of `POST /api/cards`)."""

    REQUIRED: ClassVar[str] = "'game' and 'games'"

    games: int = Field(ge=1, le=MAX_TOTAL_GAMES, description="games per cell (base and each card change)")
    cards: Annotated[list[str], Field(min_length=1)] | None = Field(
        None, description="cards to ablate, by name; default: every card the game counts"
    )
    changes: Annotated[list[Change], Field(min_length=1, max_length=3)] | None = Field(
        None, description="each card's count -1, +1, or removed; default [-1, 1]"
    )


@dataclass(frozen=True)
class Variant:
    """One ablation cell's change: which card, how, and the count it plays with."""

    card: str
    change: int | str
    field: str
    base_count: int
    count: int

    @property
    def overrides(self) -> dict[str, int]:
        return {self.field: self.count}

    def words(self) -> str:
        if self.change == "remove":
            return f"removed ({self.base_count} -> 0)"
        sign = "+" if self.change == 1 else "-"
        return f"{sign}1 copy ({self.base_count} -> {self.count})"


@dataclass(frozen=True)
class CardsSpec:
    sweep: SweepSpec  # the base (first grid entry) and one cell per variant
    variants: tuple[Variant, ...]

    @property
    def game(self) -> str:
        return self.sweep.game

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.sweep.to_dict().items() if k != "grid"}
        data["cards"] = sorted({v.card for v in self.variants})
        data["changes"] = sorted({v.change for v in self.variants}, key=str)
        return data


def load_cards_file(path: Any, max_chunks: int | None = None) -> CardsSpec:
    return parse_cards_spec(read_spec_file(path, "cards"), max_chunks)


def parse_cards_spec(data: Mapping[str, Any] | CardsSpecInput, max_chunks: int | None = None) -> CardsSpec:
    """Validate an ablation completely, before any game: the table by the sweep parser,
    each card and each changed count by the game's own config at every player count."""
    given = read_spec(CardsSpecInput, data, "cards")
    table_keys = set(TableSpecInput.model_fields) | {"games"}
    table = given.model_dump(include=table_keys, exclude_unset=True)
    base = parse_spec({**table, "games": given.games, "grid": [{}]})
    cat = catalogue(base.game)
    if cat is None:
        raise SpecError(f"{base.game} has no card catalogue: its cards cannot be ablated", field="game")
    gspec = base.game_spec
    base_cfg = gspec.make_config(dict(base.config))
    counted = {label: f for label, f in cat.count_fields.items() if hasattr(base_cfg, f)}
    names = given.cards or [label for label, f in counted.items() if getattr(base_cfg, f) > 0]
    changes: list[int | str] = list(given.changes or [-1, 1])
    if len(set(map(str, changes))) != len(changes):
        raise SpecError(f"changes lists one twice: {changes}", field="changes")
    variants: list[Variant] = []
    seen: set[tuple[str, int]] = set()
    for i, name in enumerate(names):
        if name not in counted:
            raise SpecError(
                f"unknown card {name!r} for {base.game}; cards are {', '.join(counted)}", field=f"cards.{i}"
            )
        if name in names[:i]:
            raise SpecError(f"card {name!r} is listed twice", field=f"cards.{i}")
        field = counted[name]
        if field in base.config:
            raise SpecError(f"card {name!r}: its count {field} is also fixed in config", field=f"cards.{i}")
        have = int(getattr(base_cfg, field))
        for change in changes:
            count = 0 if change == "remove" else have + int(change)
            if count < 0 or (change == "remove" and have == 0):
                raise SpecError(
                    f"card {name!r}: {have} copies, so {change} leaves none to change", field=f"cards.{i}"
                )
            _check_count(base, field, count, f"cards.{i}", name)
            if (name, count) in seen:
                continue  # -1 of a single copy is its removal: one cell
            seen.add((name, count))
            variants.append(Variant(name, change, field, have, count))
    grid: list[dict[str, Any]] = [{}] + [v.overrides for v in variants]
    sweep = parse_spec({**table, "games": given.games, "grid": grid}, max_chunks=max_chunks)
    return CardsSpec(sweep, tuple(variants))


def _check_count(base: SweepSpec, field: str, count: int, where: str, name: str) -> None:
    gspec = base.game_spec
    try:
        cfg = gspec.make_config({**base.config, field: count})
        for players in base.players:
            gspec.new_state(cfg, players, base.seed)
    except (BadConfig, ValueError, TypeError) as exc:
        raise SpecError(f"card {name!r} with {count} copies ({field}={count}): {exc}", field=where) from None


# -- the report ----------------------------------------------------------------------------
@dataclass
class _Side:
    """Per seed of one cell pair: holders' wins and holders, each side (A_b, B_b, A_v, B_v)."""

    a_b: list[int]
    b_b: list[int]
    a_v: list[int]
    b_v: list[int]


def _ratio_difference(side: _Side) -> dict[str, Any] | None:
    """Variant minus base of sum(A)/sum(B), with a delta-method interval over seeds."""
    g = len(side.a_b)
    sb, sv = sum(side.b_b), sum(side.b_v)
    if g < 2 or sb == 0 or sv == 0:
        return None
    rb, rv = sum(side.a_b) / sb, sum(side.a_v) / sv
    mb, mv = sb / g, sv / g
    u = [
        (av - rv * bv) / mv - (ab - rb * bb) / mb
        for ab, bb, av, bv in zip(side.a_b, side.b_b, side.a_v, side.b_v, strict=True)
    ]
    mean_u = sum(u) / g
    var = sum((x - mean_u) ** 2 for x in u) / (g - 1)
    se = math.sqrt(var / g)
    d = rv - rb
    if se == 0:
        p = 1.0 if d == 0 else 0.0
    else:
        from scipy.stats import norm

        p = float(2 * norm.sf(abs(d) / se))
    return {
        "base": _r(rb),
        "variant": _r(rv),
        "difference": _r(d),
        "lo": _r(d - stats.Z95 * se),
        "hi": _r(d + stats.Z95 * se),
        "p": p,
        "test": "delta-method z (paired by seed)",
        "seeds": g,
        "holders_base": sb,
        "holders_variant": sv,
    }


def ablation_report(
    spec: CardsSpec, rows: Iterable[Mapping[str, Any]], columns: Iterable[str]
) -> dict[str, Any]:
    """Each card change against base, per table and pooled, ranked (see the module doc).
    `rows` are the sweep's per-game records (cell, seed, winners, held ...)."""
    if not has_tracking(columns):
        from .cards import MISSING

        return {"available": False, "reason": MISSING, "rows": [], "ranking": []}
    sweep = spec.sweep
    cells = sweep.cells()
    by_label = {variant_label(v.overrides): v for v in spec.variants}
    base_variant = cells[0].variant
    base_of = {(c.players, c.lineup): c.index for c in cells if c.variant == base_variant}
    # (cell, seed) -> (winners, held by label)
    games: dict[tuple[int, int], tuple[set[int], dict[str, list[int]]]] = {}
    for row in rows:
        games[(int(row["cell"]), int(row["seed"]))] = (set(row["winners"] or []), decode(row.get("held")))
    pooled: dict[Variant, _Side] = defaultdict(lambda: _Side([], [], [], []))
    out_rows: list[dict[str, Any]] = []
    for cell in cells:
        v = by_label.get(cell.variant)
        if v is None or cell.variant == base_variant:
            continue
        base_cell = base_of[(cell.players, cell.lineup)]
        side = _Side([], [], [], [])
        for seed in sorted(s for c, s in games if c == cell.index):
            if (base_cell, seed) not in games:
                continue
            won_b, held_b = games[(base_cell, seed)]
            won_v, held_v = games[(cell.index, seed)]
            hb = held_b.get(v.card, [])
            hv = hb if v.change == "remove" else held_v.get(v.card, [])
            for target in (side, pooled[v]):
                target.a_b.append(sum(1 for s in hb if s in won_b))
                target.b_b.append(len(hb))
                target.a_v.append(sum(1 for s in hv if s in won_v))
                target.b_v.append(len(hv))
        out_rows.append(_row(v, f"{cell.players}p | {cell.label.split(' | ')[-1]}", side))
    for v, side in pooled.items():
        out_rows.append(_row(v, "pooled", side))
    tested = [r for r in out_rows if r["effect"] is not None]
    if tested:
        rejected, adjusted = stats.benjamini_hochberg([r["effect"]["p"] for r in tested], FDR_Q)
        for r, rej, adj in zip(tested, rejected, adjusted, strict=True):
            r["effect"]["p_adj"] = adj
            r["significant"] = bool(rej)
    for r in out_rows:
        r["text"] = _sentence(r)
    pooled_rows = [r for r in out_rows if r["table"] == "pooled"]

    def strength(r: dict[str, Any]) -> tuple[bool, float]:
        e = r["effect"]
        return (not r["significant"], -abs(e["difference"]) if e else 0.0)

    ranking: list[dict[str, Any]] = []
    for r in sorted(pooled_rows, key=strength):
        if r["card"] in {x["card"] for x in ranking}:
            continue
        ranking.append(
            {
                "rank": len(ranking) + 1,
                "card": r["card"],
                "change": r["change"],
                "difference": r["effect"]["difference"] if r["effect"] else None,
                "lo": r["effect"]["lo"] if r["effect"] else None,
                "hi": r["effect"]["hi"] if r["effect"] else None,
                "significant": r["significant"],
                "text": r["text"],
            }
        )
    return {
        "available": True,
        "game": spec.game,
        "metric": "holders' win rate (seat-games holding the card that were won); removal: base holders",
        "family": {"method": "benjamini-hochberg", "q": FDR_Q, "size": len(tested)},
        "ranking": ranking,
        "rows": out_rows,
        "headline": ranking[0]["text"] if ranking else "no card could be compared",
    }


def _row(v: Variant, table: str, side: _Side) -> dict[str, Any]:
    return {
        "card": v.card,
        "change": v.change,
        "field": v.field,
        "count": v.count,
        "base_count": v.base_count,
        "table": table,
        "effect": _ratio_difference(side),
        "significant": False,
    }


def _sentence(r: Mapping[str, Any]) -> str:
    v = Variant(r["card"], r["change"], r["field"], r["base_count"], r["count"])
    e = r["effect"]
    where = "" if r["table"] == "pooled" else f" at {r['table']}"
    if e is None:
        return f"{r['card']}: {v.words()}{where}: no holders on one side, nothing to compare"
    whose = (
        "the win rate of the seats that held it under base"
        if r["change"] == "remove"
        else "its holder's win rate"
    )
    verb = "raises" if e["difference"] > 0 else "lowers"
    verdict = "significant" if r["significant"] else "not significant"
    return (
        f"{r['card']}: {v.words()}{where} {verb} {whose} by {100 * abs(e['difference']):.1f} points "
        f"({100 * e['variant']:.1f}% against {100 * e['base']:.1f}%, 95% interval "
        f"{100 * e['lo']:+.1f} to {100 * e['hi']:+.1f}, adjusted p {e.get('p_adj', 1.0):.2g}: {verdict})"
    )


def _r(x: float) -> float:
    return round(x, DIGITS)


def report_from_folder(spec: CardsSpec, folder: Any) -> dict[str, Any]:
    """The ablation report of a finished ablation sweep's `games/` records folder."""
    from pathlib import Path

    import pyarrow.dataset as ds

    from .cards import REPORT_MAX_GAMES, read_records

    if not Path(folder).is_dir():
        return {"available": False, "reason": f"no per-game records at {folder}", "rows": [], "ranking": []}
    games = ds.dataset(folder, format="parquet", partitioning="hive").count_rows()
    if games > REPORT_MAX_GAMES:
        reason = (
            f"{games:,} games: the ablation report reads at most {REPORT_MAX_GAMES:,} (CARD_REPORT_MAX_GAMES)"
        )
        return {"available": False, "reason": reason, "rows": [], "ranking": []}
    rows, columns = read_records(folder)
    return ablation_report(spec, rows, columns)


def report_text(report: Mapping[str, Any]) -> list[str]:
    """The CLI's lines: the ranking, strongest first."""
    if not report.get("available"):
        return [str(report.get("reason", "no ablation report"))]
    lines = [f"{r['rank']}. {r['text']}" for r in report["ranking"]]
    lines.append(
        f"One Benjamini-Hochberg family of {report['family']['size']} effects at q = {report['family']['q']}; "
        f"metric: {report['metric']}."
    )
    return lines


def report_html(report: Mapping[str, Any], escape: Any) -> str:
    """A page for the ablation: the ranking, then every row."""
    parts = [
        "<!doctype html><meta charset=utf-8><title>Card ablation</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}td,th{padding:2px 8px;"
        "border-bottom:1px solid #ddd}.sig{color:#b00020}</style>",
        f"<h1>Card ablation: {escape(str(report.get('game', '')))}</h1>",
    ]
    if not report.get("available"):
        return "\n".join([*parts, f"<p>{escape(str(report.get('reason', '')))}</p>"])
    parts.append("<ol>" + "".join(f"<li>{escape(r['text'])}</li>" for r in report["ranking"]) + "</ol>")
    parts.append("<table><tr><th>card</th><th>change</th><th>table</th><th>base</th><th>variant</th>"
                 "<th>difference (95%)</th><th>adjusted p</th></tr>")  # fmt: skip
    for r in report["rows"]:
        e = r["effect"]
        if e is None:
            parts.append(f"<tr><td>{escape(r['card'])}</td><td>{r['change']}</td><td>{escape(r['table'])}</td>"
                         "<td colspan=4>no holders on one side</td></tr>")  # fmt: skip
            continue
        parts.append(
            f"<tr><td>{escape(r['card'])}</td><td>{r['change']} ({r['base_count']} -> {r['count']})</td>"
            f"<td>{escape(r['table'])}</td><td>{100 * e['base']:.1f}%</td><td>{100 * e['variant']:.1f}%</td>"
            f"<td>{100 * e['difference']:+.1f} ({100 * e['lo']:+.1f} to {100 * e['hi']:+.1f})</td>"
            f"<td{' class=sig' if r['significant'] else ''}>{e.get('p_adj', 1.0):.3g}</td></tr>"
        )
    parts.append("</table>")
    return "\n".join(parts)
