"""Card faces and backs drawn as SVG, from each game's Guide (its words and colours).

Why SVG files rather than inline markup: a face is the same picture every time it is shown,
so the browser fetches each once (`/cards/<game>/<key>.svg`, cacheable) and a panel swapped
in on every move stays small; the card's name stays in the page as text (screen readers,
the log and tests read it), the picture is `<img alt="">` beside it. Everything is drawn
here, with presentation attributes only (no `style`, so the CSP holds), in system fonts:
no asset is downloaded from anywhere else.

The drawing is one layout for every game; what differs (names, type lines, values, effect
text, colours, the mark on the back) comes from `services/engines/<game>/guide.py`.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from textwrap import wrap

from services.engines.core.guide import Colours, Face, Guide

WIDTH, HEIGHT = 100, 140
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"


def _text(x: float, y: float, words: str, size: float, fill: str, extra: str = "") -> str:
    return (
        f'<text x="{x}" y="{y}" font-family="{FONT}" font-size="{size}" fill="{fill}" '
        f'text-anchor="middle"{extra}>{escape(words)}</text>'
    )


def _lines(text: str, width: int, most: int) -> list[str]:
    lines = wrap(text, width) or [""]
    if len(lines) > most:
        lines = lines[:most]
        lines[-1] = lines[-1][: max(0, width - 1)].rstrip() + "…"
    return lines


def draw_face(face: Face, colours: Colours) -> str:
    """A card face: the name in the title band, the corner value, a large mark, the type
    line and the effect text, in the family's colours."""
    c = colours
    title = _lines(face.title, 16, 2)
    band = 18 if len(title) == 1 else 28
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{escape(face.title)}">',
        f"<title>{escape(face.title)}</title>",
        f'<rect x="1.5" y="1.5" width="97" height="137" rx="8" fill="{c.fill}" stroke="{c.edge}" stroke-width="3"/>',
        f'<rect x="6" y="6" width="88" height="{band}" rx="4" fill="{c.band}"/>',
    ]
    for i, line in enumerate(title):
        parts.append(
            _text(50, 19 + i * 10, line, 10 if len(title) == 1 else 9, c.band_ink, ' font-weight="700"')
        )
    top = 6 + band
    if face.value:
        parts.append(
            f'<circle cx="17" cy="{top + 13}" r="10" fill="#ffffff" stroke="{c.edge}" stroke-width="2"/>'
        )
        parts.append(_text(17, top + 17, face.value, 11, c.ink, ' font-weight="700"'))
    if face.glyph:
        parts.append(_text(50, top + 34, face.glyph, 22, c.edge, ' font-weight="700" opacity="0.85"'))
    parts.append(_text(50, top + 47, face.kind, 7.5, c.ink, ' font-style="italic"'))
    parts.append(
        f'<line x1="12" y1="{top + 51}" x2="88" y2="{top + 51}" stroke="{c.edge}" stroke-width="0.8"/>'
    )
    room = int((HEIGHT - 8 - (top + 58)) // 8) + 1
    size, width = (6.8, 24) if len(wrap(face.text, 24)) <= room else (6, 27)
    step = size + 1.2
    room = int((HEIGHT - 8 - (top + 58)) // step) + 1
    for i, line in enumerate(_lines(face.text, width, room)):
        parts.append(_text(50, top + 59 + i * step, line, size, c.ink))
    parts.append("</svg>")
    return "".join(parts)


def draw_back(guide: Guide) -> str:
    """A card back: the game's colours, a lattice and its mark; the same for every card."""
    c = guide.colours("back")
    lattice = "".join(
        f'<line x1="{x}" y1="10" x2="{x + 60}" y2="130" stroke="{c.band}" stroke-width="2"/>'
        f'<line x1="{x + 60}" y1="10" x2="{x}" y2="130" stroke="{c.band}" stroke-width="2"/>'
        for x in range(-50, 100, 16)
    )
    return "".join(
        (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
            f'height="{HEIGHT}" role="img" aria-label="{escape(guide.title)} card back">',
            f"<title>{escape(guide.title)} card back</title>",
            '<defs><clipPath id="inner"><rect x="8" y="8" width="84" height="124" rx="5"/></clipPath></defs>',
            f'<rect x="1.5" y="1.5" width="97" height="137" rx="8" fill="{c.fill}" stroke="{c.edge}" stroke-width="3"/>',
            f'<g clip-path="url(#inner)">{lattice}</g>',
            f'<rect x="8" y="8" width="84" height="124" rx="5" fill="none" stroke="{c.ink}" stroke-width="1.5"/>',
            f'<ellipse cx="50" cy="70" rx="28" ry="20" fill="{c.fill}" stroke="{c.ink}" stroke-width="2"/>',
            _text(50, 77, guide.back_mark, 18, c.ink, ' font-weight="700"'),
            "</svg>",
        )
    )


@lru_cache(maxsize=512)
def face_svg(guide: Guide, face: Face) -> str:
    return draw_face(face, guide.colours(face.family))


@lru_cache(maxsize=8)
def back_svg(guide: Guide) -> str:
    return draw_back(guide)
