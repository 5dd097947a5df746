"""The pieces explorers draw with, all made through :mod:`.kit`: the colours, SVG text, the rows a
reader points at, and the labelled controls (menus, sliders, checkboxes)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..palette import PALETTE
from .kit import Html, el, join, number
from .words import say

FONT = "DejaVu Sans, Arial, Helvetica, sans-serif"  # matplotlib's default first, as the static figures
INK, MUTED, GRID = "#222222", "#666666", "#d9d9d9"
BLOCKED = "#eeeeee"  # a pair a mask blocks
HIGHLIGHT = PALETTE[1]  # the palette's orange: what the reader is pointing at
SERIES = list(PALETTE[:5])  # the first five colours of the plots
# matplotlib's Blues: the nine ColorBrewer colours it interpolates linearly between
BLUES = ["#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"]


def blues(x: float) -> str:
    """The ``Blues`` colour of ``x`` in [0, 1] as ``#rrggbb`` (the JavaScript ``blues`` computes the same)."""
    x = min(max(x, 0.0), 1.0) * (len(BLUES) - 1)
    i = min(int(x), len(BLUES) - 2)
    a, b = (bytes.fromhex(c[1:]) for c in BLUES[i : i + 2])
    return "#" + "".join(f"{int(p + (q - p) * (x - i) + 0.5):02x}" for p, q in zip(a, b))


def text(x: float, y: float, content: str, size: float = 12, anchor: str = "start", **attributes: object) -> Html:
    """An SVG ``<text>`` at ``(x, y)`` (its baseline), in the book's font and ink, ``size`` px."""
    attributes = {"fill": INK, **attributes}
    return el("text", content, x=float(x), y=float(y), font_size=size, text_anchor=anchor, **attributes)


def text_width(content: str, size: float = 12) -> float:
    """A generous width of ``content`` set at ``size`` px (0.65 em a character, 1 em for an arrow or
    a CJK character): enough to lay out labels."""
    return size * sum(1.0 if ord(c) > 0x2000 else 0.65 for c in content)


#: Where a line may not start: closing punctuation stays at the end of the line before it ...
_NO_LINE_START = set(",.;:!?)]}，。、；：！？）」』”’")
_NO_LINE_END = "([{（「『“‘"  # and opening brackets stay with what follows them
#: The least height of a row the reader taps, in the figure's px: on a phone an explorer shrinks to 91 % of
#: its size (book.css), and a row must stay a target of 24 x 24 CSS px there (WCAG 2.2, 2.5.8): 27 x 0.91 = 24.6.
ROW_PITCH = 27.0


def wrap(content: str, size: float, width: float) -> list[str]:
    """``content`` broken into lines no wider than ``width`` at ``size`` px (by :func:`text_width`): at
    spaces, and between any two CJK characters (Chinese has no spaces), never before closing
    punctuation; a word wider than ``width`` keeps a line of its own. The lines are balanced: as many
    as ``width`` needs, each as short as that number allows (no last word alone on its line)."""
    rows = _fill(content, size, width)
    narrow, wide = 0.0, width
    while len(rows) > 1 and wide - narrow > 1:  # the narrowest width that needs no more lines
        middle = (narrow + wide) / 2
        narrow, wide = (narrow, middle) if len(_fill(content, size, middle)) == len(rows) else (middle, wide)
    return _fill(content, size, wide) if len(rows) > 1 else rows


def _fill(content: str, size: float, width: float) -> list[str]:
    """Lines filled greedily up to ``width`` (see :func:`wrap`)."""
    pieces = re.findall(r"[\u2e80-\u9fff\uff00-\uffef][^\s\u2e80-\u9fff\uff00-\uffef]*|\S+\s*|\s+", content)
    lines: list[str] = []
    line = ""
    for piece in pieces:
        fits = text_width((line + piece).rstrip(), size) <= width
        if line and not fits and piece[0] not in _NO_LINE_START:
            kept = line.rstrip()
            carried = len(kept) - len(kept.rstrip(_NO_LINE_END)) if kept.rstrip(_NO_LINE_END) else 0
            lines.append(kept[: len(kept) - carried])  # an opening bracket goes on with what it opens
            line = kept[len(kept) - carried :] + piece.lstrip()
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


def lines(x: float, y: float, content: str, size: float, width: float, **attributes: object) -> tuple[Html, int]:
    """``content`` as :func:`text` lines no wider than ``width`` (:func:`wrap`), the first line's baseline
    at ``y``, each next one 1.3 ``size`` below it; and how many lines that made."""
    rows = wrap(content, size, width)
    return join(text(x, y + k * 1.3 * size, row, size, **attributes) for k, row in enumerate(rows)), len(rows)


def column_label(x: float, y: float, content: str, size: float, **attributes: object) -> Html:
    """A column's label, its baseline rising at 45 degrees from ``(x, y)``."""
    return text(x, y, content, size, **attributes, transform=f"rotate(-45 {number(x, '.1f')} {number(y, '.1f')})")


def row_label(x: float, y: float, content: str, size: float, index: int, aria_label: str) -> Html:
    """A row's label that the reader points at (pointer or keyboard: ``data-index``, ``tabindex``)."""
    return text(x, y, content, size, "end", class_="row-label", data_index=str(index), tabindex="0", role="button",
                aria_label=aria_label)  # fmt: skip


def row_target(x: float, y: float, width: float, height: float, index: int) -> Html:
    """The whole band of row ``index``, label and cells, as one invisible target for the pointer and a
    tap (``data-row``; the script picks the row): a row label alone can be a few px wide. Drawn over
    the cells and under the row's label, which keeps the keyboard focus."""
    return el("rect", x=x, y=y, width=width, height=height, fill="none", pointer_events="all", class_="row-target",
              data_row=str(index))  # fmt: skip


def outline(x: float, y: float, width: float, height: float) -> Html:
    """The frame around the row pointed at (the script moves it)."""
    return el("rect", x=x - 1, y=y - 1, width=width + 2, height=height + 2, fill="none", stroke=HIGHLIGHT,
              stroke_width=2.5, class_="outline", pointer_events="none")  # fmt: skip


def select(label: str, options: Sequence[str], index: int) -> Html:
    """A labelled menu, the ``index``-th of its explorer (``data-selector``), its options by position."""
    items = [el("option", str(o), value=str(i)) for i, o in enumerate(options)]
    return el("label", label, " ", el("select", *items, data_selector=str(index), data_label=label))


def slider(words: str, marker: str, shown: str, *, steps: int, at: int, aria_label: str, aria_valuetext: str) -> Html:
    """A labelled slider over ``steps`` positions, at ``at``: its label the entry ``words`` with the value
    ``shown`` in bold (class ``marker``, which the script rewrites)."""
    if not marker.isidentifier():
        raise ValueError(f"marker={marker!r} must be an identifier")
    value = Html(f"<b class='{marker}'>") + shown + Html("</b>")  # the words in one span: the label is a flex box
    return el("label", el("span", say(words, value=value)), el("input", type="range", min="0", max=str(steps - 1), value=str(at),
              step="1", aria_label=aria_label, aria_valuetext=aria_valuetext))  # fmt: skip


def checkbox(label: str, mask: str) -> Html:
    """A labelled checkbox, ticked, marked ``data-mask``."""
    return el("label", el("input", type="checkbox", checked="checked", data_mask=mask), label)
