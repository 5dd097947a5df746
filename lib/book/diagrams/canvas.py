"""The drawing kit behind the book's schematics: one visual language for every chapter.

A schematic is drawn with matplotlib in *data units* on a blank canvas (no axes), with the book's
colour-blind-safe palette (seaborn's ``colorblind``, the same colours as the plots). Figures are
produced by code in ``lib.book.diagrams``, so they render wherever a notebook runs (the site, Jupyter,
Colab) and their labels can carry the shapes of a real forward pass: a figure cannot drift from
the code it explains.

>>> c = Canvas(8, 3, title="Self-attention")
>>> x = c.box(0.5, 1, 1.5, 1, "X\\n[B, T, d]", role="input")
>>> q = c.box(3, 1, 1.5, 1, "Q = X W_Q", role="query")
>>> c.arrow(x.right, q.left)
>>> c.figure                     # a matplotlib Figure
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ...model.checks import check_choice, check_number
from ..palette import PALETTE

# One colour per role, from the book's colour-blind palette (the plots use the same colours).
_CB = [to_rgb(c) for c in PALETTE]
COLORS: dict[str, tuple[float, float, float]] = {
    "input": _CB[7],  # grey: data coming in
    "query": _CB[0],  # blue
    "key": _CB[1],  # orange
    "value": _CB[2],  # green
    "output": _CB[4],  # purple
    "attention": _CB[9],  # light blue: softmax / attention weights
    "ffn": _CB[3],  # vermilion: feed-forward, nonlinearity
    "norm": _CB[8],  # yellow: LayerNorm, scaling
    "encoder": _CB[0],
    "decoder": _CB[1],
    "rnn": _CB[5],  # brown: recurrent state
    "mask": _CB[7],
    "highlight": _CB[3],
}
INK = "#222222"


@dataclass(frozen=True)
class Box:
    """A drawn box; its anchors are where arrows attach."""

    x: float
    y: float
    w: float
    h: float

    @property
    def left(self) -> tuple[float, float]:
        return (self.x, self.y + self.h / 2)

    @property
    def right(self) -> tuple[float, float]:
        return (self.x + self.w, self.y + self.h / 2)

    @property
    def top(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h)

    @property
    def bottom(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y)

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)


def color(role: str) -> tuple[float, float, float]:
    """The book's colour for ``role`` (one of :data:`COLORS`)."""
    check_choice("role", role, sorted(COLORS))
    return COLORS[role]


def light(rgb: tuple[float, float, float], amount: float = 0.75) -> tuple[float, float, float]:
    """``rgb`` mixed with white: ``amount`` 0 is the colour itself, 1 is white (the boxes' fill, 0.75)."""
    return tuple(c + (1 - c) * amount for c in rgb)


class Canvas:
    """A blank figure measured in data units: ``width × height``, origin bottom-left."""

    def __init__(self, width: float, height: float, title: str | None = None, scale: float = 0.9):
        check_number("width", width, 0, low_open=True)
        check_number("height", height, 0, low_open=True)
        title_height = 0.45 if title else 0.0  # inches above the drawing, for the title
        figure_height = height * scale + title_height
        self.figure: Figure = plt.figure(figsize=(width * scale, figure_height))
        self.ax = self.figure.add_axes((0, 0, 1, height * scale / figure_height))
        self.ax.set_xlim(0, width)
        self.ax.set_ylim(0, height)
        self.ax.set_aspect("equal")
        self.ax.axis("off")
        if title:
            self.figure.suptitle(title, fontsize=12, fontweight="bold", y=0.99)

    def box(self, x: float, y: float, w: float, h: float, text: str = "", role: str = "input", fontsize: float = 10,
            filled: bool = True, dashed: bool = False) -> Box:  # fmt: skip
        """A rounded box at ``(x, y)`` (bottom-left) of size ``w × h``, tinted by ``role``."""
        edge = color(role)
        face = light(edge) if filled else "white"
        self._rounded(
            x, y, w, h, 0.08, facecolor=face, edgecolor=edge, linewidth=1.6, linestyle="--" if dashed else "-"
        )
        if text:
            self.ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize, color=INK)
        return Box(x, y, w, h)

    def matrix(
        self,
        x: float,
        y: float,
        rows: int,
        cols: int,
        cell: float = 0.25,
        role: str = "input",
        values=None,
        label: str | None = None,
        fontsize: float = 9,
    ) -> Box:
        """A grid of ``rows × cols`` cells (a tensor); ``values`` in [0, 1] shade the cells."""
        base = color(role)

        def face(i: int, j: int):
            if values is None:
                return light(base, 0.6)
            v = float(values[i][j])
            return light(base, 1 - max(0.0, min(1.0, v))) if v > 0 else "white"

        faces = [[face(i, j) for j in range(cols)] for i in range(rows)]
        lines = "white" if values is None else "#bbbbbb"
        frame = self.grid(x, y, faces, cell, lines=lines, line_width=0.8, frame=base, frame_width=1.4)
        if label:
            self.text(frame.center[0], y - 0.12, label, va="top", fontsize=fontsize)
        return frame

    def arrow(
        self,
        start: tuple[float, float],
        end: tuple[float, float],
        role: str | None = None,
        text: str | None = None,
        style: str = "-|>",
        dashed: bool = False,
        curve: float = 0.0,
        fontsize: float = 9,
        linewidth: float = 1.3,
    ) -> None:
        """An arrow from ``start`` to ``end``; ``curve`` bends it (radians-ish, + is left)."""
        ink = INK if role is None else color(role)
        self.ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle=style,
                mutation_scale=12,
                color=ink,
                linewidth=linewidth,
                linestyle="--" if dashed else "-",
                connectionstyle=f"arc3,rad={curve}",
                shrinkA=2,
                shrinkB=2,
            )
        )
        if text:
            mx, my = (start[0] + end[0]) / 2, (start[1] + end[1]) / 2
            self.ax.text(
                mx,
                my,
                text,
                ha="center",
                va="center",
                fontsize=fontsize,
                color=ink,
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none"),
            )

    def text(self, x: float, y: float, text: str, ha: str = "center", va: str = "center", fontsize: float = 10,
             role: str | None = None, bold: bool = False, italic: bool = False) -> None:  # fmt: skip
        """A label at ``(x, y)``."""
        self.ax.text(
            x,
            y,
            text,
            ha=ha,
            va=va,
            fontsize=fontsize,
            color=INK if role is None else color(role),
            fontweight="bold" if bold else "normal",
            fontstyle="italic" if italic else "normal",
        )

    def bars(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        values,
        role: str = "input",
        signed: bool = False,
        top: float | None = None,
    ) -> Box:
        """A small bar chart of ``values`` in the box ``(x, y, w, h)``: one bar per value.

        ``signed=False``: bars grow up from the bottom, 1.0 is the full height (weights).
        ``signed=True``: bars grow both ways from a middle line, the largest ``|value|`` is half
        the height (scores). ``top`` (optional) is the value drawn at full reach instead, so
        that two charts can share a scale.
        """
        values = [float(v) for v in values]
        if not values:
            raise ValueError("values must not be empty")
        base = y + h / 2 if signed else y
        reach = h / 2 if signed else h
        if top is None:
            top = max(abs(v) for v in values) if signed else 1.0
        top = top or 1.0
        pitch = w / len(values)
        for j, v in enumerate(values):
            length = v / top * reach
            self.ax.add_patch(
                Rectangle(
                    (x + j * pitch + 0.1 * pitch, min(base, base + length)),
                    0.8 * pitch,
                    abs(length),
                    facecolor=color(role),
                    edgecolor="none",
                )
            )
        self.ax.plot([x, x + w], [base, base], color="#888888", linewidth=0.8)
        return Box(x, y, w, h)

    def region(self, x: float, y: float, w: float, h: float, label: str = "", role: str = "encoder") -> Box:
        """A light dashed frame around a group of boxes (a layer, a stack), labelled top-left."""
        edge = color(role)
        self._rounded(x, y, w, h, 0.15, facecolor=light(edge, 0.92), edgecolor=edge, linewidth=1.0, linestyle="--",
                      zorder=0)  # fmt: skip
        if label:
            self.ax.text(x + 0.1, y + h - 0.1, label, ha="left", va="top", fontsize=9, color=edge, fontweight="bold")
        return Box(x, y, w, h)

    def grid(self, x: float, y: float, faces, cell: float, *, lines, line_width: float, frame,
             frame_width: float) -> Box:  # fmt: skip
        """Square cells of side ``cell`` from ``(x, y)`` (bottom-left): ``faces[i][j]`` the colour of row ``i``
        (counted from the top) and column ``j``, parted by ``lines``; the whole framed in ``frame``."""
        rows, cols = len(faces), len(faces[0]) if faces else 0
        for i, row in enumerate(faces):
            for j, face in enumerate(row):
                cell_at = (x + j * cell, y + (rows - 1 - i) * cell)
                self.ax.add_patch(Rectangle(cell_at, cell, cell, facecolor=face, edgecolor=lines, linewidth=line_width))
        outline = Box(x, y, cols * cell, rows * cell)
        self.ax.add_patch(Rectangle((x, y), outline.w, outline.h, fill=False, edgecolor=frame, linewidth=frame_width))
        return outline

    def _rounded(self, x: float, y: float, w: float, h: float, rounding: float, **style) -> None:
        """A rounded rectangle, the outline of boxes and regions; ``style``: its patch's colours and lines."""
        self.ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle=f"round,pad=0.02,rounding_size={rounding}", **style))

    def done(self) -> Figure:
        """Close the figure for pyplot (so a notebook does not draw it twice) and return it."""
        plt.close(self.figure)
        return self.figure
