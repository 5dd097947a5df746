"""Where position information enters a Transformer: three schematics side by side.

- **Absolute** (sinusoidal, learned): a vector per position is *added to the embeddings*, once,
  before the first layer: ``x_i = √d · E[w_i] + PE(i)``.
- **Rotary** (RoPE): nothing is added; *inside every attention layer* the query at position ``m``
  and the key at position ``n`` are rotated by ``R_m`` and ``R_n`` before their dot product, so the
  score is ``q_mᵀ R_{n-m} k_n``: it sees only the offset ``n - m``.
- **Relative** (Shaw et al., 2018): inside every attention layer, a learned vector per clipped
  offset ``j - i`` is added to the key (``a^K``) and to the value (``a^V``).

:func:`position_schematic` takes a :class:`~lib.model.transformer.TransformerConfig` (or a
:class:`~lib.model.transformer.Transformer`) and labels the boxes with its real shapes.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.checks import check_int
from ...model.transformer import Transformer, TransformerConfig
from .canvas import Canvas


def _config(model_or_config):
    if isinstance(model_or_config, Transformer):
        return model_or_config.config
    if isinstance(model_or_config, TransformerConfig):
        return model_or_config
    raise TypeError(
        f"model_or_config must be a Transformer or a TransformerConfig, got {type(model_or_config).__name__}"
    )


def position_schematic(model_or_config, seq_len: int = 16) -> Figure:
    """Three panels: absolute positions added to the embeddings, RoPE rotating ``q`` and ``k``,
    Shaw et al.'s relative vectors added to keys and values inside attention.

    Shapes are read from the config: ``d = d_model``, ``d_head = d_model / n_heads``,
    ``k = max_relative_distance``; ``seq_len`` is the ``T`` written on the tensors.
    """
    c = _config(model_or_config)
    check_int("seq_len", seq_len, minimum=1)
    T, d, H = seq_len, c.d_model, c.n_heads
    dh, k = d // H, c.max_relative_distance

    canvas = Canvas(16.5, 7.6, title="Where the position enters")
    w = 5.0  # panel width
    gap = 0.5
    xs = [0.25, 0.25 + w + gap, 0.25 + 2 * (w + gap)]

    # --- 1. absolute: added to the embeddings --------------------------------------------------
    x0 = xs[0]
    canvas.region(x0, 0.2, w, 7.0, "absolute: sinusoidal, learned", role="encoder")
    tok = canvas.box(x0 + 0.3, 0.55, 2.2, 0.85, f"token ids\n[B, T={T}]", role="input", fontsize=9)
    emb = canvas.box(x0 + 0.3, 2.0, 2.2, 0.95, f"$\\sqrt{{d}}\\,E[w_i]$\n[B, T, d={d}]", role="input", fontsize=9)
    canvas.arrow(tok.top, emb.bottom)
    pe = canvas.box(x0 + 2.95, 2.0, 1.85, 0.95, f"$PE(i)$\n[T, d={d}]", role="highlight", fontsize=9)
    plus = canvas.box(x0 + 1.05, 3.45, 0.7, 0.6, "+", role="highlight", fontsize=14)
    canvas.arrow(emb.top, plus.bottom)
    canvas.arrow(pe.top, plus.right, role="highlight", curve=0.25)
    layers = canvas.box(
        x0 + 0.3,
        4.6,
        4.5,
        1.2,
        "encoder layers\n(attention sees no position:\nit is all inside $x_i$)",
        role="attention",
        fontsize=9,
    )
    canvas.arrow(plus.top, (plus.top[0], layers.y))
    canvas.text(
        x0 + w / 2, 6.35, r"$x_i = \sqrt{d}\,E[w_i] + PE(i)$" + "\nonce, before layer 1", fontsize=9.5, italic=True
    )
    canvas.text(x0 + 3.85, 1.55, "sin/cos table, or\nan nn.Embedding(max_len, d)", fontsize=8)

    # --- 2. rotary: rotate q and k inside attention ----------------------------------------------
    x0 = xs[1]
    canvas.region(x0, 0.2, w, 7.0, "rotary (RoPE): inside attention", role="query")
    xin = canvas.box(x0 + 1.4, 0.55, 2.2, 0.85, f"$x_i$ (no position)\n[B, T={T}, d={d}]", role="input", fontsize=9)
    q = canvas.box(x0 + 0.3, 2.0, 1.8, 0.8, f"$q = x W_Q$\n[B, H={H}, T, {dh}]", role="query", fontsize=8.5)
    kk = canvas.box(x0 + 2.9, 2.0, 1.8, 0.8, f"$k = x W_K$\n[B, H, T, {dh}]", role="key", fontsize=8.5)
    canvas.arrow(xin.top, q.bottom)
    canvas.arrow(xin.top, kk.bottom)
    rq = canvas.box(x0 + 0.3, 3.25, 1.8, 0.8, r"$R_m\, q_m$" + "\nrotate by $m\\theta$", role="highlight", fontsize=9)
    rk = canvas.box(x0 + 2.9, 3.25, 1.8, 0.8, r"$R_n\, k_n$" + "\nrotate by $n\\theta$", role="highlight", fontsize=9)
    canvas.arrow(q.top, rq.bottom)
    canvas.arrow(kk.top, rk.bottom)
    score = canvas.box(
        x0 + 0.8,
        4.55,
        3.4,
        0.9,
        r"$(R_m q_m)^\top (R_n k_n) = q_m^\top R_{n-m}\, k_n$" + "\n→ softmax → × V",
        role="attention",
        fontsize=9,
    )
    canvas.arrow(rq.top, (rq.top[0] + 0.3, score.y))
    canvas.arrow(rk.top, (rk.top[0] - 0.3, score.y))
    canvas.text(
        x0 + w / 2,
        6.35,
        f"$\\theta_i = 10000^{{-2i/{dh}}}$, {dh // 2} planes per head\nin every layer, no parameters",
        fontsize=9.5,
        italic=True,
    )

    # --- 3. relative: learned vectors per offset inside attention -------------------------------
    x0 = xs[2]
    canvas.region(x0, 0.2, w, 7.0, "relative (Shaw et al.): inside attention", role="value")
    xin = canvas.box(x0 + 1.4, 0.55, 2.2, 0.85, f"$x_i$ (no position)\n[B, T={T}, d={d}]", role="input", fontsize=9)
    qkv = canvas.box(x0 + 0.3, 2.0, 2.4, 0.8, f"q, k, v\n[B, H={H}, T, {dh}]", role="query", fontsize=8.5)
    table = canvas.box(x0 + 3.0, 2.0, 1.8, 0.8, f"$a^K, a^V$\n[2k+1={2 * k + 1}, {dh}]", role="highlight", fontsize=8.5)
    canvas.arrow(xin.top, qkv.bottom)
    offs = canvas.box(
        x0 + 3.0,
        3.25,
        1.8,
        0.8,
        f"$a_{{j-i}}$, offset\nclipped to ±k={k}\n[T, T, {dh}]",
        role="highlight",
        fontsize=8.5,
    )
    canvas.arrow(table.top, offs.bottom)
    score = canvas.box(
        x0 + 0.3,
        4.55,
        4.5,
        0.9,
        r"$e_{ij} = q_i^\top (k_j + a^K_{j-i}) / \sqrt{d_{head}}$" + "\n"
        r"$z_i = \sum_j \alpha_{ij} (v_j + a^V_{j-i})$",
        role="attention",
        fontsize=9,
    )
    canvas.arrow(qkv.top, (qkv.top[0], score.y))
    canvas.arrow(offs.top, (offs.top[0], score.y))
    canvas.text(
        x0 + w / 2,
        6.35,
        "learned, one pair of tables per layer\noffsets beyond ±k share a vector",
        fontsize=9.5,
        italic=True,
    )
    return canvas.done()
