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
    cell = 0.26 if rows <= 6 else 0.2
    width, height = 18.2, 7.6
    title = "Self-attention: queries, keys and values" + (f" ({H} heads, head {head} drawn)" if H > 1 else "")
    c = Canvas(width, height, title=title)
    mid = 3.6
    ys = {"query": 5.9, "key": 3.6, "value": 1.3}

    # X
    x_box = c.matrix(0.4, mid - rows * cell / 2, rows, min(d_model, MAX_COLS), cell, role="input")
    c.text(x_box.center[0], x_box.y - 0.25, f"X\n{_shape(seen['q_proj'][0])}", fontsize=9, va="top")
    c.text(x_box.center[0], x_box.y + x_box.h + 0.25, "T tokens × d", fontsize=8, italic=True)

    grids = {}
    for role, name, letter in (("query", "q_proj", "Q"), ("key", "k_proj", "K"), ("value", "v_proj", "V")):
        y = ys[role]
        w = c.box(2.7, y - 0.35, 1.5, 0.7, f"$W_{letter}$\n{d_model} × {H * d_k}", role=role, fontsize=9)
        c.arrow(x_box.right, w.left, curve=0.0)
        grid = c.matrix(5.0, y - rows * cell / 2, rows, cols, cell, role=role)
        c.arrow(w.right, grid.left)
        below = role == "key"  # K's arrow leaves upwards: its label goes below it
        c.text(
            grid.right[0] + 0.12,
            grid.y if below else grid.y + grid.h,
            f"${letter} = X W_{letter}$\n{_shape(seen[name][1])}" + (f"\nheads {_shape(heads)}" if H > 1 else ""),
            fontsize=8.5,
            ha="left",
            va="bottom" if below else "top",
        )
        grids[role] = grid

    # scores and weights
    score_box = c.box(8.2, 4.25, 2.3, 0.8, r"$Q K^\top / \sqrt{d_k}$" + f"\n(× {scale:.3g})", role="norm", fontsize=10)
    c.arrow(grids["query"].right, (score_box.x, score_box.y + 0.6))
    c.arrow(grids["key"].right, (score_box.x, score_box.y + 0.2))
    c.text(score_box.center[0], score_box.y - 0.12, f"scores {_shape(weights)}", fontsize=8.5, va="top")
    soft = c.box(10.8, 4.25, 1.4, 0.8, "softmax\nover keys", role="attention", fontsize=9)
    c.arrow(score_box.right, soft.left)
    a_rows = a_cols = rows
    A = weights[0, head, :rows, :rows].float().cpu()
    shade = (A / A.max()).tolist()
    a_grid = c.matrix(12.8, 4.65 - a_rows * cell / 2 + 0.2, a_rows, a_cols, cell, role="attention", values=shade)
    c.arrow(soft.right, a_grid.left)
    c.text(
        a_grid.center[0], a_grid.y + a_grid.h + 0.3, f"A (the weights)\n{_shape(weights)}", fontsize=8.5, va="bottom"
    )
    c.text(a_grid.right[0] + 0.12, a_grid.center[1], "each row\nsums to 1", fontsize=8, ha="left", italic=True)

    # O = A V, then W_O
    av = c.box(12.75, 1.0, 1.6, 0.7, "$O = A V$", role="output", fontsize=10)
    c.arrow(a_grid.bottom, av.top)
    c.arrow(grids["value"].right, av.left)
    c.text(av.center[0], av.y - 0.15, _shape(seen["out_proj"][0]), fontsize=8.5, va="top")
    wo = c.box(15.2, 1.0, 1.1, 0.7, "$W_O$", role="output", fontsize=10)
    c.arrow(av.right, wo.left)
    out_grid = c.matrix(16.9, 1.35 - rows * cell / 2, rows, min(d_model, 4), cell, role="output")
    c.arrow(wo.right, out_grid.left)
    c.text(out_grid.center[0], out_grid.y - 0.15, f"output\n{_shape(out)}", fontsize=8.5, va="top")
    if T > MAX_ROWS or d_k > MAX_COLS or d_model > MAX_COLS:
        c.text(
            0.4,
            height - 0.25,
            f"(grids show at most {MAX_ROWS} tokens and {MAX_COLS} features; labels give the real shapes)",
            fontsize=8,
            ha="left",
            italic=True,
        )
    return c.done()


def scaling_and_softmax(q: Tensor, k: Tensor) -> Figure:
    r"""Where :math:`1/\sqrt{d_k}` sits, and what the softmax does with large scores.

    Top: the path from :math:`q` and :math:`k_j` to the weights, with the division by
    :math:`\sqrt{d_k}` between the dot product and the softmax. Bottom: the real scores
    :math:`e_j = q^\top k_j` of one query (``q [d_k]``) against its keys (``k [T, d_k]``) and the
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
        title=rf"Where $1/\sqrt{{d_k}}$ sits, and what the softmax does with large scores"
        f" ($d_k$ = {d_k}, {T} keys)",
    )
    # the path
    y = 7.1
    qb = c.box(0.4, y + 0.25, 1.3, 0.6, f"$q$  [{d_k}]", role="query", fontsize=9)
    kb = c.box(0.4, y - 0.65, 1.3, 0.6, f"$k_j$  [{T}, {d_k}]", role="key", fontsize=9)
    dot = c.box(2.6, y - 0.35, 2.4, 0.8, r"$e_j = q^\top k_j$" + f"\nVar ≈ $d_k$ = {d_k}", role="input", fontsize=9)
    c.arrow(qb.right, dot.left, curve=-0.15)
    c.arrow(kb.right, dot.left, curve=0.15)
    div = c.box(
        5.9, y - 0.4, 2.6, 0.9, r"$\div\,\sqrt{d_k}$" + f" = {math.sqrt(d_k):.3g}\nVar → 1", role="norm", fontsize=10
    )
    c.arrow(dot.right, div.left)
    c.text(div.center[0], div.y + div.h + 0.3, "the one line scaling adds", fontsize=8.5, role="highlight", bold=True)
    sm = c.box(9.4, y - 0.35, 2.2, 0.8, r"$\alpha = \mathrm{softmax}(e)$", role="attention", fontsize=9)
    c.arrow(div.right, sm.left)
    out = c.box(12.5, y - 0.35, 2.1, 0.8, r"$o = \sum_j \alpha_j v_j$", role="output", fontsize=9)
    c.arrow(sm.right, out.left)
    c.arrow(
        (div.center[0], div.y - 0.05),
        (div.center[0], 5.55),
        dashed=True,
        text="without it (left) and with it (right)",
        fontsize=8.5,
    )

    panels = [(0.6, "unscaled", scores, torch.softmax(scores, 0)), (8.2, "scaled", scaled, torch.softmax(scaled, 0))]
    for x, name, e, alpha in panels:
        c.region(
            x - 0.35,
            0.2,
            6.6,
            5.05,
            f"{name}: " + ("$e_j = q^\\top k_j$" if name == "unscaled" else "$e_j = q^\\top k_j / \\sqrt{d_k}$"),
            role="input",
        )
        c.bars(x, 2.85, 5.8, 1.55, e, role="key", signed=True, top=float(scores.abs().max()))
        c.text(
            x, 4.6, f"scores $e_j$: from {e.min():.1f} to {e.max():.1f} (both panels: one scale)", fontsize=9, ha="left"
        )
        c.bars(x, 0.55, 5.8, 1.3, alpha, role="attention")
        entropy = float(torch.special.entr(alpha).sum())
        c.text(
            x, 2.1, f"weights $\\alpha_j$: largest {alpha.max():.2f}, entropy {entropy:.2f} nats", fontsize=9, ha="left"
        )
    return c.done()
