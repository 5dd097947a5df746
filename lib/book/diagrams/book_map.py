"""The book on one page: the Transformer of slide 27, each part marked with the chapters that build it.

>>> from lib.book.diagrams import book_map
>>> book_map(range(1, 11))          # the introduction's figure, for chapters 1 to 10

The encoder (left) and the decoder (right), bottom-up as on the slide: tokens, embeddings plus
positions, the stacked layers, and the output softmax. Each part carries round badges with the
numbers of the chapters where it is built or measured (:data:`PARTS`); a chapter that is not in
``chapters`` gets no badge, so the figure follows the table of contents.
"""

from __future__ import annotations

from collections.abc import Iterable

from matplotlib.figure import Figure
from matplotlib.patches import Circle

from .canvas import INK, Box, Canvas, color

#: Where each chapter lives: part of the figure -> the chapters that build or measure it.
PARTS: dict[str, tuple[int, ...]] = {
    "positions": (6,),
    "self-attention": (2, 3, 4, 8),
    "encoder feed-forward": (2, 7),
    "masked self-attention": (5,),
    "cross-attention": (1, 7),
    "decoder feed-forward": (7,),
    "output": (5, 12),
    "encoder": (9, 11),
    "decoder": (10,),
}

_W, _H = 12.6, 9.4  # the canvas, in data units (at scale 0.55: the page's column, labels at their set size)
_ENC_X, _DEC_X, _COL_W = 0.3, 7.3, 5.0
_BADGE_R, _BADGE_STEP = 0.2, 0.46


def _badges(c: Canvas, x: float, y: float, numbers: Iterable[int], right: bool = True) -> None:
    """Round badges, one per chapter number, centred on ``y``: right-aligned at ``x``, or left-aligned."""
    numbers = sorted(numbers)
    for k, n in enumerate(numbers):
        cx = x - _BADGE_R - (len(numbers) - 1 - k) * _BADGE_STEP if right else x + _BADGE_R + k * _BADGE_STEP
        c.ax.add_patch(Circle((cx, y), _BADGE_R, facecolor=color("highlight"), edgecolor="white", linewidth=1.0))
        c.ax.text(cx, y, str(n), ha="center", va="center", fontsize=8, fontweight="bold", color="white")


def _part(c: Canvas, x: float, y: float, w: float, h: float, text: str, role: str, chapters: list[int]) -> Box:
    """A box whose label is centred in the room its badges leave."""
    box = c.box(x, y, w, h, role=role)
    room = w - len(chapters) * _BADGE_STEP - 0.1
    c.ax.text(x + room / 2, y + h / 2, text, ha="center", va="center", fontsize=9, color=INK)
    _badges(c, x + w - 0.1, y + h / 2, chapters)
    return box


def book_map(chapters: Iterable[int]) -> Figure:
    """The architecture with the chapters of ``chapters`` (their numbers) marked where they live."""
    present = set()
    for n in chapters:
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise TypeError(f"chapters must be chapter numbers (int >= 1), got {n!r}")
        present.add(n)
    marks = {part: [n for n in numbers if n in present] for part, numbers in PARTS.items()}
    c = Canvas(_W, _H, title="The Transformer, chapter by chapter", scale=0.55)

    # tokens, then embeddings + positions, under each stack
    for x, tokens in ((_ENC_X, "source tokens"), (_DEC_X, "target tokens, shifted right")):
        cx = x + _COL_W / 2
        t = c.box(x + 0.9, 0.25, _COL_W - 1.8, 0.55, tokens, role="input", fontsize=9)
        e = _part(c, x + 0.3, 1.2, _COL_W - 0.6, 0.65, "embeddings + positions", "norm", marks["positions"])
        c.arrow(t.top, e.bottom)
        c.arrow(e.top, (cx, 2.3))

    # the encoder: N × [self-attention, feed-forward]
    enc = c.region(_ENC_X, 2.3, _COL_W, 3.3, role="encoder")
    c.text(_ENC_X + 0.15, 5.35, "encoder layer × N", ha="left", fontsize=9, role="encoder", bold=True)
    _badges(c, _ENC_X + 2.75, 5.35, marks["encoder"], right=False)
    attend = _part(c, _ENC_X + 0.3, 2.65, _COL_W - 0.6, 0.75, "self-attention", "attention", marks["self-attention"])
    ffn = _part(c, _ENC_X + 0.3, 3.85, _COL_W - 0.6, 0.75, "feed-forward", "ffn", marks["encoder feed-forward"])
    c.arrow(attend.top, ffn.bottom)

    # the decoder: N × [masked self-attention, cross-attention, feed-forward]
    dec = c.region(_DEC_X, 2.3, _COL_W, 4.5, role="decoder")
    c.text(_DEC_X + 0.15, 6.55, "decoder layer × N", ha="left", fontsize=9, role="decoder", bold=True)
    _badges(c, _DEC_X + 2.75, 6.55, marks["decoder"], right=False)
    masked = _part(
        c, _DEC_X + 0.3, 2.65, _COL_W - 0.6, 0.75, "masked self-attention", "attention", marks["masked self-attention"]
    )
    cross = _part(c, _DEC_X + 0.3, 3.85, _COL_W - 0.6, 0.75, "cross-attention", "key", marks["cross-attention"])
    dffn = _part(c, _DEC_X + 0.3, 5.05, _COL_W - 0.6, 0.75, "feed-forward", "ffn", marks["decoder feed-forward"])
    c.arrow(masked.top, cross.bottom)
    c.arrow(cross.top, dffn.bottom)

    # the encoder's output is the memory that the decoder's cross-attention reads
    memory = c.box(_ENC_X + 0.9, 6.05, _COL_W - 1.8, 0.55, "memory", role="encoder", fontsize=9)
    c.arrow((enc.x + enc.w / 2, enc.y + enc.h), memory.bottom)
    c.arrow(memory.right, cross.left, role="key", curve=-0.2)
    # its label above the arrow's start, clear of the encoder's frame below it and of the curve
    c.text(memory.x + memory.w + 1.1, memory.y + memory.h - 0.05, "keys, values", fontsize=8, role="key")

    # the output: a linear map and a softmax over the vocabulary, the next token's probabilities
    out = _part(c, _DEC_X + 0.3, 7.3, _COL_W - 0.6, 0.75, "linear + softmax: next token", "output", marks["output"])
    c.arrow((dec.x + dec.w / 2, dec.y + dec.h), out.bottom)
    c.text(_ENC_X, 8.55, "residual connection and LayerNorm around every sub-layer", ha="left", fontsize=8)
    return c.done()
