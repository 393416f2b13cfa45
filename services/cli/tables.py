"""Tables that fit the terminal they are printed in.

Every result table of `cultists` is printed here. Each column has a drop rank: when the
terminal is too narrow for all of them, the column with the highest rank is left out
first, then the next, until the rest fit at their natural width (long text, such as a
cell's label or a bot's name, wraps at spaces instead; numbers and intervals never wrap).
Rank 0 columns always stay. A line under the table names what was left out and that
`--wide` prints every column whatever the width; a legend explains any coded column.
docs/cli.md lists each table's drop order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

_EDGE = 1  # the table's right border
_PER_COLUMN = 3  # a border and one space of padding on each side


@dataclass(frozen=True)
class Group:
    """A row that opens a group of rows: its title across the table, set off by a rule
    (the sweep table's grid variant, so each cell's label need not repeat it)."""

    title: str


@dataclass(frozen=True)
class Column:
    header: str
    drop: int = 0  # 0: always shown; otherwise the highest rank is left out first
    wrap: bool = False  # long text that may wrap at spaces (a label, a name)
    justify: str = "right"
    min_width: int = 12  # the narrowest a wrapping column is squeezed to


def _length(cell: str) -> int:
    return Text.from_markup(cell).cell_len


def _needed(column: Column, cells: Iterable[str]) -> int:
    """The width a column needs: its longest cell (or, for text that wraps, its longest
    word, at least `min_width`), and its header."""
    cells = list(cells)
    if column.wrap:
        words = [w for c in cells for w in Text.from_markup(c).plain.split()]
        longest = max((len(w) for w in words), default=0)
        natural = max((_length(c) for c in cells), default=0)
        body = min(natural, max(column.min_width, longest))
    else:
        body = max((_length(c) for c in cells), default=0)
    header = max((len(w) for w in column.header.split()), default=0) if column.wrap else len(column.header)
    return max(body, header)


Row = Sequence[str] | Group


def _cells(rows: Sequence[Row]) -> list[Sequence[str]]:
    return [r for r in rows if not isinstance(r, Group)]


def fit(columns: Sequence[Column], rows: Sequence[Row], width: int) -> list[int]:
    """The indexes of the columns to show in `width` characters (see the module doc)."""
    rows = _cells(rows)
    shown = list(range(len(columns)))
    needed = [_needed(c, (r[i] for r in rows)) for i, c in enumerate(columns)]

    def total() -> int:
        return sum(needed[i] for i in shown) + _PER_COLUMN * len(shown) + _EDGE

    droppable = sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop)
    for i in droppable:
        if total() <= width:
            break
        shown.remove(i)
    return shown


def natural_width(columns: Sequence[Column], rows: Sequence[Row]) -> int:
    """The width at which no cell wraps."""
    rows = _cells(rows)
    widths = [max([len(c.header), *(_length(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    return sum(widths) + _PER_COLUMN * len(columns) + _EDGE


def print_table(
    console: Console,
    title: str,
    columns: Sequence[Column],
    rows: Sequence[Row],
    *,
    wide: bool = False,
    legend: Iterable[str] = (),
) -> list[str]:
    """Print the table fitted to `console`'s width (all of it with `wide`), then the
    note on what was left out and the legend. Returns the headers left out."""
    if wide:
        shown = list(range(len(columns)))
        width = max(console.width, natural_width(columns, rows))
    else:
        width = console.width
        shown = fit(columns, rows, width)
    table = Table(title=title)
    for i in shown:
        c = columns[i]
        table.add_column(
            c.header,
            justify=c.justify,  # type: ignore[arg-type]
            no_wrap=not c.wrap,
            overflow="fold" if c.wrap else "ellipsis",
        )
    for n, row in enumerate(rows):
        if isinstance(row, Group):
            if n:
                table.add_section()
            table.add_row(Text(row.title, style="bold"), *([""] * (len(shown) - 1)))
        else:
            table.add_row(*(row[i] for i in shown))
    narrow = console.width
    console.width = width  # wider than the terminal only with --wide: the terminal wraps
    try:
        console.print(table)
    finally:
        console.width = narrow
    left_out = [columns[i].header for i in range(len(columns)) if i not in shown]
    if left_out:
        console.print(f"[dim]left out to fit {width} columns: {', '.join(left_out)} (--wide shows all)[/dim]")
    for line in legend:
        console.print(f"[dim]{line}[/dim]")
    return left_out
