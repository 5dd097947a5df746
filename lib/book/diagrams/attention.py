"""Chapter 2's and chapter 3's schematics: the query/key/value dataflow of self-attention, with the
shapes of a real forward pass, and where the :math:`1/\\sqrt{d_k}` sits and what the softmax does
with large scores.

>>> qkv_dataflow(attention, x)                 # a MultiHeadAttention and its input [B, T, d]
>>> scaling_and_softmax(q, k)                  # one query [d_k] and its keys [T, d_k]
"""

from __future__ import annotations

import math

import torch
from matplotlib.figure import Figure
from torch import Tensor

from ...heads import record_attention
from ...model.attention import MultiHeadAttention
from ...model.checks import check_int, check_tensor
from .canvas import Canvas

MAX_ROWS, MAX_COLS = 8, 6  # the largest grid drawn for a tensor (bigger ones are cut, and say so)
FIGURE_WIDTH_IN = 7.0  # the page column: a figure is never wider, so its labels (9 pt or more) keep their size


def _shape(t: Tensor | tuple[int, ...]) -> str:
    return "[" + ", ".join(str(n) for n in (t.shape if isinstance(t, Tensor) else t)) + "]"


def qkv_dataflow(attention: torch.nn.Module, x: Tensor, head: int = 0) -> Figure:
    r"""Self-attention's dataflow, labelled with the shapes of ``attention(x, x, x)``.

    .. math::
        Q = X W_Q,\quad K = X W_K,\quad V = X W_V,\qquad
        A = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right),\qquad
        O = A V,\quad \text{output} = O\, W_O

    ``attention``: a :class:`lib.MultiHeadAttention`; ``x``: its input ``[B, T, d_model]``. The
    figure runs one forward pass (no gradients) and reads every shape from it (the tensors that go
    into and come out of ``q_proj``, ``k_proj``, ``v_proj``, ``out_proj``, and the attention
    weights ``[B, H, T, T]``); the attention matrix is drawn with the real weights of the first
    sequence and of head ``head``.
    """
    if not isinstance(attention, MultiHeadAttention):
        raise TypeError(f"attention must be a lib.MultiHeadAttention, got {type(attention).__name__}")
    check_tensor("x", x)
    if x.dim() != 3 or x.size(-1) != attention.d_model:
        raise ValueError(f"x must be a tensor [B, T, d_model={attention.d_model}], got {tuple(x.shape)}")
    check_int("head", head, minimum=0, maximum=attention.n_heads - 1)

    seen: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {}
    hooks = [
        getattr(attention, name).register_forward_hook(
            lambda module, inputs, output, name=name: seen.__setitem__(
                name, (tuple(inputs[0].shape), tuple(output.shape))
            )
        )
        for name in ("q_proj", "k_proj", "v_proj", "out_proj")
    ]
    try:
        with torch.no_grad(), record_attention(attention) as maps:
            out, _ = attention(x, x, x)
    finally:
        for hook in hooks:
            hook.remove()
    weights = maps[""]  # [B, H, T, T]
    B, H, T, _ = weights.shape
    d_model, d_k = attention.d_model, attention.d_head
    heads = (B, H, T, d_k)
    scale = attention.scale if attention.scale is not None else 1 / math.sqrt(d_k)

    rows = min(T, MAX_ROWS)
    cols = min(d_k, MAX_COLS)
    cell = 0.16 if rows <= 6 else 0.13
    # Two parts, to fit the page column (FIGURE_WIDTH_IN): the projections on the left, read left to
    # right; then the attention itself down the right-hand column, and the output projection.
    width, height = 13.0, 7.7
    title = "Self-attention: queries, keys and values" + (f"\n({H} heads, head {head} drawn)" if H > 1 else "")
    c = Canvas(width, height, title=title, scale=FIGURE_WIDTH_IN / width)
    ys = {"query": 6.55, "key": 5.15, "value": 3.75}

    # X
    x_box = c.matrix(0.3, ys["key"] - rows * cell / 2, rows, min(d_model, MAX_COLS), cell, role="input")
    c.text(x_box.center[0], x_box.y - 0.2, f"$X$\n{_shape(seen['q_proj'][0])}", fontsize=9, va="top")
    c.text(x_box.center[0], x_box.y + x_box.h + 0.2, "T tokens\n× $d_\\mathrm{model}$", fontsize=9, va="bottom")

    grids = {}
    for role, name, letter in (("query", "q_proj", "Q"), ("key", "k_proj", "K"), ("value", "v_proj", "V")):
        y = ys[role]
        w = c.box(2.0, y - 0.4, 1.6, 0.8, f"$W_{letter}$\n{d_model} × {H * d_k}", role=role, fontsize=9)
        c.arrow(x_box.right, w.left, curve=0.0)
        grid = c.matrix(4.2, y - rows * cell / 2, rows, cols, cell, role=role)
        c.arrow(w.right, grid.left)
        label = f"${letter} = X W_{letter}$  {_shape(seen[name][1])}"
        c.text(grid.x, grid.y + grid.h + 0.08, label, fontsize=9, ha="left", va="bottom")
        grids[role] = grid
    if H > 1:
        c.text(
            2.0,
            ys["value"] - 0.55,
            f"Q, K, V each split into {H} heads:\n{_shape(heads)}",
            fontsize=9,
            ha="left",
            va="top",
        )

    # scores and weights, down the right-hand column
    score_box = c.box(8.0, 5.5, 2.5, 0.85, r"$Q K^\top / √d_k$" + f"\n(× {scale:.3g})", role="norm", fontsize=10)
    c.arrow(grids["query"].right, (score_box.x, score_box.y + 0.6))
    c.arrow(grids["key"].right, (score_box.x, score_box.y + 0.25))
    c.text(score_box.right[0] + 0.12, score_box.center[1], f"scores\n{_shape(weights)}", fontsize=9, ha="left")
    soft = c.box(8.1, 4.15, 2.3, 0.6, "softmax over keys", role="attention", fontsize=9)
    c.arrow(score_box.bottom, soft.top)
    a_rows = a_cols = rows
    A = weights[0, head, :rows, :rows].float().cpu()
    shade = (A / A.max()).tolist()
    a_cell = 0.2
    a_grid = c.matrix(9.25 - a_rows * a_cell / 2, 2.25, a_rows, a_cols, a_cell, role="attention", values=shade)
    c.arrow(soft.bottom, a_grid.top)
    c.text(
        a_grid.right[0] + 0.15,
        a_grid.center[1],
        f"A, the weights\n{_shape(weights)}\neach row sums to 1",
        fontsize=9,
        ha="left",
    )

    # O = A V, then W_O
    av = c.box(8.4, 0.75, 1.7, 0.7, "$O = A V$", role="output", fontsize=10)
    c.arrow(a_grid.bottom, av.top)
    c.arrow(grids["value"].right, av.left, curve=0.15)
    c.text(av.center[0], av.y - 0.1, _shape(seen["out_proj"][0]), fontsize=9, va="top")
    wo = c.box(10.5, 0.75, 0.9, 0.7, "$W_O$", role="output", fontsize=10)
    c.arrow(av.right, wo.left)
    out_grid = c.matrix(11.8, 1.1 - rows * cell / 2, rows, min(d_model, 4), cell, role="output")
    c.arrow(wo.right, out_grid.left)
    c.text(out_grid.center[0], out_grid.y - 0.1, f"output\n{_shape(out)}", fontsize=9, va="top")
    if T > MAX_ROWS or d_k > MAX_COLS or d_model > MAX_COLS:
        c.text(
            0.3,
            0.35,
            f"(grids show at most {MAX_ROWS} tokens and {MAX_COLS} features;\nlabels give the real shapes)",
            fontsize=9,
            ha="left",
            italic=True,
        )
    return c.done()


def scaling_and_softmax(q: Tensor, k: Tensor) -> Figure:
    r"""Where :math:`1/\sqrt{d_k}` sits, and what the softmax does with large scores.

    Top: the path from :math:`q` and :math:`k_j` to the weights, with the division by
    :math:`\sqrt{d_k}` between the dot product and the softmax. Bottom: the real scores
    :math:`e_j = q k_j^\top` of one query (``q [d_k]``) against its keys (``k [T, d_k]``) and the
    softmax weights they give, unscaled (left: scores of size :math:`\sqrt{d_k}`, nearly one-hot
    weights) and scaled (right: unit-size scores, spread weights).
    """
    check_tensor("q", q)
    check_tensor("k", k)
    if q.dim() != 1:
        raise ValueError(f"q must be one query, a tensor [d_k], got {tuple(q.shape)}")
    if k.dim() != 2 or k.size(-1) != q.size(0):
        raise ValueError(f"k must be the keys, a tensor [T, d_k={q.size(0)}], got {tuple(k.shape)}")
    if not 2 <= k.size(0) <= 16:
        raise ValueError(f"k must hold 2 to 16 keys to fit the figure, got {k.size(0)}")
    d_k, T = q.size(0), k.size(0)
    scores = (k.float() @ q.float()).cpu()  # e_j = q·k_j  [T]
    scaled = scores / math.sqrt(d_k)

    width, height = 15.0, 8.6
    c = Canvas(
        width,
        height,
        title=f"Where 1/√dₖ sits, and what the softmax does with large scores\n(dₖ = {d_k}, {T} keys)",
        scale=FIGURE_WIDTH_IN / width,
    )
    # the path
    y = 7.1
    qb = c.box(0.1, y + 0.25, 2.0, 0.6, f"$q$ [{d_k}]", role="query", fontsize=9)
    kb = c.box(0.1, y - 0.65, 2.0, 0.6, f"$k_j$ [{T}, {d_k}]", role="key", fontsize=9)
    dot = c.box(2.6, y - 0.35, 2.4, 0.8, r"$e_j = q k_j^\top$" + f"\nVar ≈ dₖ = {d_k}", role="input", fontsize=9)
    c.arrow(qb.right, dot.left, curve=-0.15)
    c.arrow(kb.right, dot.left, curve=0.15)
    div = c.box(5.9, y - 0.4, 2.6, 0.9, r"$\div\,√d_k$" + f" = {math.sqrt(d_k):.3g}\nVar → 1", role="norm", fontsize=10)
    c.arrow(dot.right, div.left)
    c.text(div.center[0], div.y + div.h + 0.3, "the one line scaling adds", fontsize=9, role="highlight", bold=True)
    sm = c.box(9.4, y - 0.35, 2.2, 0.8, r"$\alpha = \mathrm{softmax}(e)$", role="attention", fontsize=9)
    c.arrow(div.right, sm.left)
    out = c.box(12.5, y - 0.35, 2.1, 0.8, r"$o = \sum_j \alpha_j v_j$", role="output", fontsize=9)
    c.arrow(sm.right, out.left)
    c.arrow(
        (div.center[0], div.y - 0.05),
        (div.center[0], 5.55),
        dashed=True,
        text="without it (left) and with it (right)",
        fontsize=9,
    )

    panels = [(0.6, "unscaled", scores, torch.softmax(scores, 0)), (8.2, "scaled", scaled, torch.softmax(scaled, 0))]
    for x, name, e, alpha in panels:
        c.region(
            x - 0.35,
            0.2,
            6.6,
            5.05,
            f"{name}: " + ("eⱼ = qkⱼᵀ" if name == "unscaled" else "eⱼ = qkⱼᵀ / √dₖ"),
            role="input",
        )
        c.bars(x, 2.85, 5.8, 1.55, e, role="key", signed=True, top=float(scores.abs().max()))
        same = "" if name == "unscaled" else "\n(drawn to the same scale as on the left)"
        c.text(x, 4.6, f"scores eⱼ from {e.min():.1f} to {e.max():.1f}{same}", fontsize=9, ha="left", va="top")
        c.bars(x, 0.55, 5.8, 1.3, alpha, role="attention")
        entropy = float(torch.special.entr(alpha).sum())
        c.text(
            x,
            2.35,
            f"weights αⱼ: largest {alpha.max():.2f},\nentropy {entropy:.2f} nats",
            fontsize=9,
            ha="left",
        )
    return c.done()
