"""The multi-head attention schematic: split ``[B, T, d_model] → [B, H, T, d_head]``, attend per head, merge.

:func:`multi_head_diagram` runs a real :class:`~lib.model.attention.MultiHeadAttention` on a real input and
draws every tensor of the forward pass as a grid of cells, labelled with its shape; the attention
maps are shaded with the weights the layer computed.
"""

from __future__ import annotations

import torch
from matplotlib.figure import Figure
from torch import Tensor

from ...model.attention import MultiHeadAttention
from ...model.checks import check_tensor
from ...model.generation import eval_mode
from .canvas import Canvas

MAX_TOKENS, MAX_WIDTH = 8, 16  # every cell is drawn: keep the layer small


def _shape(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


@torch.no_grad()
def multi_head_diagram(attention: MultiHeadAttention, x: Tensor, *, cell: float = 0.2) -> Figure:
    r"""Draw multi-head self-attention on ``x [1, T, d_model]``, with the shapes of this forward pass.

    .. math::
        Q = X W_Q,\; K = X W_K,\; V = X W_V \;\xrightarrow{\text{split}}\; Q_h, K_h, V_h \in
        \mathbb{R}^{T \times d_\text{head}},\quad
        \mathrm{head}_h = \mathrm{softmax}\!\left(\tfrac{Q_h K_h^\top}{\sqrt{d_\text{head}}}\right) V_h,\quad
        \mathrm{MultiHead} = [\mathrm{head}_0; \dots; \mathrm{head}_{H-1}]\, W_O

    Two rows, drawn for the page column (about 7 in wide, every label at least 7 pt). Top row, left
    to right: the input ``X``; the projections ``Q, K, V [B, T, d_model]`` with their column blocks
    (one per head); after ``split_heads`` one panel per head (numbered from 0) with its
    ``Q_h, K_h, V_h [B, T, d_head]``, its attention map ``[T, T]`` (shaded by the real weights) and its
    output ``[T, d_head]``. Bottom row: after ``merge_heads`` the concatenation ``[B, T, d_model]`` and
    the output projection ``W_O``. Needs ``T ≤ 8`` and ``d_model ≤ 16`` (every cell is drawn).
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a lib.MultiHeadAttention, got {type(attention).__name__}")
    check_tensor("x", x)
    if x.dim() != 3 or x.size(0) != 1 or x.size(-1) != attention.d_model:
        raise ValueError(f"x must be a tensor [1, T, d_model={attention.d_model}], got {tuple(x.shape)}")
    T, d, H, d_h = x.size(1), attention.d_model, attention.n_heads, attention.d_head
    if T > MAX_TOKENS or d > MAX_WIDTH:
        raise ValueError(
            f"the schematic draws every cell: needs T <= {MAX_TOKENS} and d_model <= {MAX_WIDTH}, "
            f"got T={T}, d_model={d}"
        )
    with eval_mode(attention):
        q, k, v = attention.q_proj(x), attention.k_proj(x), attention.v_proj(x)  # [1, T, d]
        qh, kh, vh = (attention.split_heads(t) for t in (q, k, v))  # [1, H, T, d_h]
        out, weights = attention(x, x, x)  # weights [1, H, T, T]
        heads = weights @ vh  # [1, H, T, d_h]
        merged = attention.merge_heads(heads)  # [1, T, d]

    c = cell
    gap = 0.12  # between the column blocks of two heads
    mat_h = T * c  # height of a [T, ·] matrix
    block_w = d_h * c
    full_w = d * c + (H - 1) * gap  # a [T, d] matrix drawn as H column blocks
    small, label = 7, 8  # font sizes (pt): at ~7 in wide the figure is shown at its natural size

    # Top row: X, the projections, one panel per head. Bottom row: the merge and W_O.
    pitch = 0.5  # between the parts of a head panel
    panel_h = mat_h + 1.2
    panel_w = 0.3 + 3 * block_w + 2 * pitch + 0.8 + T * c + 0.8 + block_w + 0.4
    proj_step = mat_h + 0.8
    top_h = max(3 * proj_step, H * (panel_h + 0.25)) + 0.3
    bottom_h = mat_h + 1.3
    height = top_h + bottom_h
    x_in, x_proj = 0.2, 0.2 + d * c + 1.0
    x_panel = x_proj + full_w + 2.0
    width = x_panel + panel_w + 0.2
    canvas = Canvas(
        width,
        height,
        title=f"Multi-head attention: H = {H} heads\n$d_\\mathrm{{model}}$ = {d}, $d_\\mathrm{{head}}$ = {d_h}",
        scale=min(0.62, 6.9 / width),
    )

    def blocks(x0: float, y0: float, role: str, label_text: str | None = None, head_titles: bool = False):
        """A [T, d] matrix drawn as H column blocks of width d_h; returns its frame (x, y, w, h)."""
        for h in range(H):
            canvas.matrix(x0 + h * (block_w + gap), y0, T, d_h, cell=c, role=role)
            if head_titles:
                canvas.text(x0 + h * (block_w + gap) + block_w / 2, y0 + mat_h + 0.15, f"h{h}", fontsize=small)
        if label_text:
            canvas.text(x0 + full_w / 2, y0 - 0.12, label_text, va="top", fontsize=label)
        return x0, y0, full_w, mat_h

    # 1. the input
    top_mid = bottom_h + top_h / 2
    y_mid = top_mid - mat_h / 2
    canvas.matrix(x_in, y_mid, T, d, cell=c, role="input")
    canvas.text(x_in + d * c / 2, y_mid - 0.12, f"X {_shape(x)}", va="top", fontsize=label)
    canvas.text(x_in + d * c / 2, y_mid + mat_h + 0.2, "T tokens", fontsize=small, italic=True)

    # 2. the projections, each cut into H column blocks
    for i, (name, role, t) in enumerate(
        (("$Q = XW_Q$", "query", q), ("$K = XW_K$", "key", k), ("$V = XW_V$", "value", v))
    ):
        y0 = height - 0.2 - (i + 1) * proj_step + 0.3
        blocks(x_proj, y0, role, f"{name} {_shape(t)}", head_titles=True)
        canvas.arrow((x_in + d * c, y_mid + mat_h / 2), (x_proj - 0.05, y0 + mat_h / 2), role=role)

    # 3. one panel per head
    for h in range(H):
        y0 = height - 0.1 - (h + 1) * (panel_h + 0.25)
        canvas.region(x_panel, y0, panel_w, panel_h, label=f"head {h}", role="attention")
        yb = y0 + 0.45
        xb = x_panel + 0.3
        for j, (name, role) in enumerate((("Q", "query"), ("K", "key"), ("V", "value"))):
            canvas.matrix(xb + j * (block_w + pitch), yb, T, d_h, cell=c, role=role)
            canvas.text(xb + j * (block_w + pitch) + block_w / 2, yb - 0.1, f"${name}_{h}$", va="top", fontsize=label)
        x_att = xb + 3 * block_w + 2 * pitch + 0.8
        canvas.matrix(x_att, yb, T, T, cell=c, role="attention", values=(weights[0, h] / weights.max()).tolist())
        canvas.text(x_att + T * c / 2, yb - 0.1, "softmax", va="top", fontsize=small)
        canvas.arrow((xb + 3 * block_w + 2 * pitch + 0.05, yb + mat_h / 2), (x_att - 0.05, yb + mat_h / 2))
        x_o = x_att + T * c + 0.8
        canvas.matrix(x_o, yb, T, d_h, cell=c, role="output")
        canvas.text(x_o + block_w / 2, yb - 0.1, f"head {h}", va="top", fontsize=label)
        canvas.arrow((x_att + T * c + 0.05, yb + mat_h / 2), (x_o - 0.05, yb + mat_h / 2))
        canvas.text(
            x_panel + panel_w - 0.1,
            y0 + panel_h - 0.1,
            f"{_shape(heads[:, h])} per head",
            ha="right",
            va="top",
            fontsize=small,
        )
    x_split = (x_proj + full_w + x_panel) / 2
    canvas.arrow((x_proj + full_w + 0.15, top_mid), (x_panel - 0.1, top_mid))
    canvas.text(x_split, top_mid + 0.12, "split_heads", va="bottom", fontsize=label)
    canvas.text(x_split, top_mid - 0.12, f"{_shape(q)}\n→ {_shape(qh)}", va="top", fontsize=small)
    canvas.text(x_split, top_mid - 0.95, "block h\n→ head h", va="top", fontsize=small, italic=True)

    # 4. bottom row: merge (the heads side by side), then W_O
    y_m = 0.55
    x_merge = x_panel + 0.3
    x_out = x_merge + full_w + 2.2
    blocks(x_merge, y_m, "output", f"concat {_shape(merged)}", head_titles=True)
    panel_bottom = height - 0.1 - H * (panel_h + 0.25)
    canvas.arrow((x_merge + full_w / 2, panel_bottom - 0.05), (x_merge + full_w / 2, y_m + mat_h + 0.4))
    canvas.text(
        x_merge + full_w / 2 + 0.2, (panel_bottom + y_m + mat_h + 0.4) / 2,
        f"merge_heads: {_shape(heads)} → {_shape(merged)}", ha="left", fontsize=small,
    )  # fmt: skip
    canvas.matrix(x_out, y_m, T, d, cell=c, role="output")
    canvas.text(x_out + d * c / 2, y_m - 0.12, f"out {_shape(out)}", va="top", fontsize=label)
    canvas.arrow((x_merge + full_w + 0.05, y_m + mat_h / 2), (x_out - 0.05, y_m + mat_h / 2), text="$W_O$",
                 fontsize=label)  # fmt: skip
    return canvas.done()
