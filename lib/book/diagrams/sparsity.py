"""Who may attend to whom: full, causal, sliding-window and BigBird patterns as ``T × T`` grids.

Row ``i`` is a query, column ``j`` a key; a coloured cell is a pair whose score is computed. Under each
grid: how many of the ``T²`` pairs that is, taken from the real masks of :mod:`lib.efficient`.
"""

from __future__ import annotations

import torch
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ...efficient import bigbird_mask, sliding_window_mask
from ...model.checks import check_int
from ...model.masks import causal_mask
from .canvas import Canvas, color, light

# What each kind of cell is, and its colour role.
KINDS = {"attends": "attention", "window": "query", "global": "key", "random": "value"}


def _grid(c: Canvas, x: float, y: float, kinds: list[list[str | None]], cell: float) -> None:
    faces = [["white" if kind is None else light(color(KINDS[kind]), 0.25) for kind in row] for row in kinds]
    c.grid(x, y, faces, cell, lines="#cccccc", line_width=0.5, frame="#444444", frame_width=1.2)


def sparsity_patterns(T: int = 16, window: int = 2, n_global: int = 2, n_random: int = 2, seed: int = 0) -> Figure:
    """Four ``T × T`` grids (query rows, key columns): full, causal, sliding window, BigBird."""
    check_int("T", T, minimum=1)
    full = torch.ones(T, T, dtype=torch.bool)
    causal = causal_mask(T)
    local = sliding_window_mask(T, window)
    bigbird = bigbird_mask(T, window, n_global, n_random, seed)
    is_global = torch.zeros(T, T, dtype=torch.bool)
    is_global[:n_global], is_global[:, :n_global] = True, True

    def kinds(mask: torch.Tensor, kind_of) -> list[list[str | None]]:
        return [[kind_of(i, j) if mask[i, j] else None for j in range(T)] for i in range(T)]

    panels = [
        ("full", kinds(full, lambda i, j: "attends"), full),
        ("causal", kinds(causal, lambda i, j: "attends"), causal),
        (f"sliding window, w = {window}", kinds(local, lambda i, j: "window"), local),
        (
            f"BigBird: w = {window}, {n_global} global,\nup to {n_random} random per row",
            kinds(bigbird, lambda i, j: "global" if is_global[i, j] else "window" if local[i, j] else "random"),
            bigbird,
        ),
    ]
    # Two rows of two grids, drawn for the page column (about 7 in): the grids shrink with T so that
    # the labels keep their size (9-10 pt) whatever T is.
    cell = min(0.18, 2.6 / T)
    size, gap = cell * T, 1.0
    width = 2 * size + gap + 1.0
    legend_h, row_h = 1.05, size + 1.4  # the legend's two lines; one row: label, grid, title
    height = legend_h + 2 * row_h
    c = Canvas(width, height, title="Which query–key pairs are computed\n(rows: queries i, columns: keys j)")
    for n, (name, grid, mask) in enumerate(panels):
        x = 0.5 + (n % 2) * (size + gap)
        y = legend_h + (1 - n // 2) * row_h + 0.55  # the grid's bottom edge
        _grid(c, x, y, grid, cell)
        c.text(x + size / 2, y + size + 0.15, name, va="bottom", fontsize=10, bold=True)
        pairs = int(mask.sum())
        c.text(x + size / 2, y - 0.3, f"{pairs} of T² = {T * T} pairs ({pairs / T / T:.0%})", fontsize=9)
    labels = [
        ("window (|i − j| ≤ w)", "window"),
        ("global tokens", "global"),
        ("random keys", "random"),
        ("full / causal", "attends"),
    ]
    for n, (text, kind) in enumerate(labels):
        x, y = 0.5 + (n % 2) * (size + gap), 0.6 - (n // 2) * 0.45
        c.ax.add_patch(Rectangle((x, y), 0.25, 0.25, facecolor=light(color(KINDS[kind]), 0.25), edgecolor="#888888"))
        c.text(x + 0.35, y + 0.12, text, ha="left", fontsize=9)
    return c.done()
