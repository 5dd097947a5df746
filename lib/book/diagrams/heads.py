"""The multi-head attention schematic: split ``[B, T, d] → [B, H, T, d/H]``, attend per head, merge.

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
        Q = X W^Q,\; K = X W^K,\; V = X W^V \;\xrightarrow{\text{split}}\; Q_h, K_h, V_h \in
        \mathbb{R}^{T \times d/H},\quad
        \mathrm{head}_h = \mathrm{softmax}\!\left(\tfrac{Q_h K_h^\top}{\sqrt{d/H}}\right) V_h,\quad
        \mathrm{MultiHead} = [\mathrm{head}_1; \dots; \mathrm{head}_H]\, W^O

    Left to right: the input ``X``; the projections ``Q, K, V [B, T, d]`` with their column blocks
    (one per head); after ``split_heads`` each head's ``Q_h, K_h, V_h [B, T, d/H]``, its attention
    map ``[T, T]`` (shaded by the real weights) and output ``[T, d/H]``; after ``merge_heads`` the
    concatenation ``[B, T, d]`` and the output projection ``W^O``. Needs ``T ≤ 8`` and
    ``d_model ≤ 16`` (every cell is drawn).
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
    full_w = d * c + (H - 1) * gap  # a [T, d] matrix drawn as H blocks

    # Vertical layout: the head panels on the right set the height.
    panel_h = mat_h + 1.05
    height = max(3 * (mat_h + 0.75) + 0.6, H * (panel_h + 0.25) + 0.6) + 0.5
    x_in, x_proj = 0.3, 0.3 + d * c + 1.3
    x_panel = x_proj + full_w + 2.6
    panel_w = 3 * block_w + 2 * 0.35 + 0.6 + T * c + 0.6 + block_w + 0.5
    x_merge = x_panel + panel_w + 2.6
    x_out = x_merge + full_w + 1.3
    width = x_out + d * c + 0.4
    canvas = Canvas(
        width, height, title=f"Multi-head attention: d_model = {d}, H = {H} heads of width d/H = {d_h}", scale=0.62
    )

    def blocks(x0: float, y0: float, role: str, label: str | None = None, head_titles: bool = False):
        """A [T, d] matrix drawn as H column blocks of width d_h; returns its frame (x, y, w, h)."""
        for h in range(H):
            canvas.matrix(x0 + h * (block_w + gap), y0, T, d_h, cell=c, role=role)
            if head_titles:
                canvas.text(x0 + h * (block_w + gap) + block_w / 2, y0 + mat_h + 0.15, f"h{h}", fontsize=7)
        if label:
            canvas.text(x0 + full_w / 2, y0 - 0.15, label, va="top", fontsize=8)
        return x0, y0, full_w, mat_h

    # 1. the input
    y_mid = height / 2 - 0.2 - mat_h / 2
    canvas.matrix(x_in, y_mid, T, d, cell=c, role="input")
    canvas.text(x_in + d * c / 2, y_mid - 0.15, f"X {_shape(x)}", va="top", fontsize=8)
    canvas.text(x_in + d * c / 2, y_mid + mat_h + 0.2, "T tokens × d", fontsize=7, italic=True)

    # 2. the projections, each cut into H column blocks
    proj_y = {}
    for i, (name, role, t) in enumerate(
        (("$Q = XW^Q$", "query", q), ("$K = XW^K$", "key", k), ("$V = XW^V$", "value", v))
    ):
        y0 = height - 0.9 - (i + 1) * (mat_h + 0.75) + 0.35
        blocks(x_proj, y0, role, f"{name} {_shape(t)}", head_titles=True)
        proj_y[role] = y0
        canvas.arrow((x_in + d * c, y_mid + mat_h / 2), (x_proj - 0.05, y0 + mat_h / 2), role=role)

    # 3. one panel per head
    panel_tops = []
    for h in range(H):
        y0 = height - 0.75 - (h + 1) * (panel_h + 0.25)
        canvas.region(x_panel, y0, panel_w, panel_h, label=f"head {h}", role="attention")
        yb = y0 + 0.5
        xb = x_panel + 0.3
        for j, (name, role) in enumerate((("Q", "query"), ("K", "key"), ("V", "value"))):
            canvas.matrix(xb + j * (block_w + 0.35), yb, T, d_h, cell=c, role=role)
            canvas.text(xb + j * (block_w + 0.35) + block_w / 2, yb - 0.12, f"${name}_{h}$", va="top", fontsize=8)
        x_att = xb + 3 * block_w + 2 * 0.35 + 0.6
        canvas.matrix(x_att, yb, T, T, cell=c, role="attention", values=(weights[0, h] / weights.max()).tolist())
        canvas.text(x_att + T * c / 2, yb - 0.12, f"softmax($Q_{h}K_{h}^T/\\sqrt{{{d_h}}}$)", va="top", fontsize=7)
        canvas.arrow((xb + 3 * block_w + 2 * 0.35 + 0.05, yb + mat_h / 2), (x_att - 0.05, yb + mat_h / 2))
        x_o = x_att + T * c + 0.6
        canvas.matrix(x_o, yb, T, d_h, cell=c, role="output")
        canvas.text(x_o + block_w / 2, yb - 0.12, f"head$_{h}$", va="top", fontsize=8)
        canvas.arrow((x_att + T * c + 0.05, yb + mat_h / 2), (x_o - 0.05, yb + mat_h / 2))
        canvas.text(
            x_panel + panel_w - 0.1,
            y0 + panel_h - 0.12,
            f"{_shape(heads[:, h])} per head",
            ha="right",
            va="top",
            fontsize=7,
        )
        panel_tops.append((y0, yb))
    mid = height / 2 - 0.2
    canvas.arrow((x_proj + full_w + 0.15, mid), (x_panel - 0.15, mid), text="split_heads", fontsize=8)
    canvas.text((x_proj + full_w + x_panel) / 2, mid - 0.35, f"{_shape(q)}\n→ {_shape(qh)}", va="top", fontsize=7)
    canvas.text((x_proj + full_w + x_panel) / 2, mid + 0.35, "block h → head h", va="bottom", fontsize=7, italic=True)

    # 4. merge: the heads side by side, then W^O
    y_m = mid - mat_h / 2
    blocks(x_merge, y_m, "output", f"concat {_shape(merged)}", head_titles=True)
    canvas.arrow((x_panel + panel_w + 0.15, mid), (x_merge - 0.15, mid), text="merge_heads", fontsize=8)
    canvas.text(
        (x_panel + panel_w + x_merge) / 2, mid - 0.35, f"{_shape(heads)}\n→ {_shape(merged)}", va="top", fontsize=7
    )
    canvas.matrix(x_out, y_m, T, d, cell=c, role="output")
    canvas.text(x_out + d * c / 2, y_m - 0.15, f"out {_shape(out)}", va="top", fontsize=8)
    canvas.arrow((x_merge + full_w + 0.05, y_m + mat_h / 2), (x_out - 0.05, y_m + mat_h / 2), text="$W^O$")
    return canvas.done()
