"""Where position information enters a Transformer: three schematics, on two rows.

- **Absolute** (sinusoidal, learned): a vector per position is *added to the embeddings*, once,
  before the first layer: ``x_i = √d_model · E[w_i] + PE(i)``.
- **Rotary** (RoPE): nothing is added; *inside every attention layer* the query (a row) at position
  ``m`` and the key at position ``n`` are rotated, ``q_m R_m`` and ``k_n R_n``, before their dot
  product, so the score is ``q_m R_{m-n} k_nᵀ``: it sees only the offset ``n - m``.
- **Relative** (Shaw et al., 2018): inside every attention layer, a learned vector per clipped
  offset ``j - i`` (clipped to ``±c``, ``c = max_relative_distance``) is added to the key (``a^K``)
  and to the value (``a^V``).

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

    Shapes are read from the config: ``d_model``, ``d_head = d_model / n_heads``, the clip distance
    ``c = max_relative_distance``; ``seq_len`` is the ``T`` written on the tensors. Two rows (absolute
    and rotary on top, relative below), drawn for the page column (about 7 in wide, labels at least
    7 pt). Vectors are rows, as in the book: ``q R_m``, ``q_i k_j^T``.
    """
    c = _config(model_or_config)
    check_int("seq_len", seq_len, minimum=1)
    T, d, H = seq_len, c.d_model, c.n_heads
    dh, clip = d // H, c.max_relative_distance

    w, ph = 5.4, 6.3  # panel width and height
    gap = 0.3
    width = 2 * w + gap + 0.4
    canvas = Canvas(width, 2 * ph + 0.7, title="Where the position enters", scale=6.9 / width)
    fs, note = 7.5, 8  # box labels, notes (pt): the figure is shown at its natural size
    xs = [0.2, 0.2 + w + gap]
    ys = [ph + 0.5, 0.2]  # top row, bottom row

    # --- 1. absolute: added to the embeddings (top left) ---------------------------------------
    x0, y0 = xs[0], ys[0]
    canvas.region(x0, y0, w, ph, "absolute: sinusoidal, learned", role="encoder")
    tok = canvas.box(x0 + 0.3, y0 + 0.35, 2.3, 0.8, f"token ids\n[B, T={T}]", role="input", fontsize=fs)
    emb = canvas.box(
        x0 + 0.3,
        y0 + 1.65,
        2.3,
        0.95,
        f"$√d_\\mathrm{{model}}\\,E[w_i]$\n[B, T, $d_\\mathrm{{model}}$={d}]",
        role="input",
        fontsize=fs,
    )
    canvas.arrow(tok.top, emb.bottom)
    pe = canvas.box(
        x0 + 3.0, y0 + 1.65, 2.1, 0.95, f"$PE(i)$\n[T, $d_\\mathrm{{model}}$={d}]", role="highlight", fontsize=fs
    )
    plus = canvas.box(x0 + 1.1, y0 + 3.0, 0.7, 0.55, "+", role="highlight", fontsize=12)
    canvas.arrow(emb.top, plus.bottom)
    canvas.arrow(pe.top, plus.right, role="highlight", curve=0.25)
    layers = canvas.box(
        x0 + 0.3, y0 + 3.95, 4.8, 1.0, "encoder layers (attention sees no\nposition: it is all inside xᵢ)",
        role="attention", fontsize=fs,
    )  # fmt: skip
    canvas.arrow(plus.top, (plus.top[0], layers.y))
    canvas.text(x0 + w / 2, y0 + 5.35, r"$x_i = √d_\mathrm{model}\,E[w_i] + PE(i)$" + "\nonce, before layer 0",
                fontsize=note, italic=True)  # fmt: skip
    canvas.text(x0 + 4.05, y0 + 1.15, "sin/cos table, or\nnn.Embedding", fontsize=fs)

    def unpositioned(x0: float, y0: float):
        """The input of the rotary and relative panels: x_i with no position added."""
        label = f"xᵢ, no position\n[B, T={T}, $d_\\mathrm{{model}}$={d}]"
        return canvas.box(x0 + 1.5, y0 + 0.35, 2.4, 0.8, label, role="input", fontsize=fs)

    # --- 2. rotary: rotate q and k inside attention (top right) ----------------------------------
    x0, y0 = xs[1], ys[0]
    canvas.region(x0, y0, w, ph, "rotary (RoPE): inside attention", role="query")
    xin = unpositioned(x0, y0)
    q = canvas.box(x0 + 0.3, y0 + 1.65, 2.1, 0.8, f"$q = x W_Q$\n[B, H={H}, T, {dh}]", role="query", fontsize=fs)
    kk = canvas.box(x0 + 3.0, y0 + 1.65, 2.1, 0.8, f"$k = x W_K$\n[B, H, T, {dh}]", role="key", fontsize=fs)
    canvas.arrow(xin.top, q.bottom)
    canvas.arrow(xin.top, kk.bottom)
    rq = canvas.box(x0 + 0.3, y0 + 2.85, 2.1, 0.8, r"$q_m R_m$" + "\nrotate by mθ", role="highlight", fontsize=fs)
    rk = canvas.box(x0 + 3.0, y0 + 2.85, 2.1, 0.8, r"$k_n R_n$" + "\nrotate by nθ", role="highlight", fontsize=fs)
    canvas.arrow(q.top, rq.bottom)
    canvas.arrow(kk.top, rk.bottom)
    score = canvas.box(
        x0 + 0.3, y0 + 4.05, 4.8, 0.9,
        r"$(q_m R_m)(k_n R_n)^\top = q_m R_{m-n}\, k_n^\top$" + "\n→ softmax → × V",
        role="attention", fontsize=fs,
    )  # fmt: skip
    canvas.arrow(rq.top, (rq.top[0], score.y))
    canvas.arrow(rk.top, (rk.top[0], score.y))
    canvas.text(
        x0 + w / 2, y0 + 5.4, f"$\\theta_i = 10000^{{-2i/{dh}}}$\n{dh // 2} planes per head, in every\nlayer, no parameters",
        fontsize=note, italic=True,
    )  # fmt: skip

    # --- 3. relative: learned vectors per offset inside attention (bottom left) -------------------
    x0, y0 = xs[0], ys[1]
    canvas.region(x0, y0, w, ph, "relative (Shaw et al.): inside attention", role="value")
    xin = unpositioned(x0, y0)
    qkv = canvas.box(x0 + 0.3, y0 + 1.65, 2.4, 0.8, f"q, k, v\n[B, H={H}, T, {dh}]", role="query", fontsize=fs)
    table = canvas.box(x0 + 3.0, y0 + 1.65, 2.1, 0.8, f"$a^K, a^V$\n[2c+1={2 * clip + 1}, {dh}]", role="highlight",
                       fontsize=fs)  # fmt: skip
    canvas.arrow(xin.top, qkv.bottom)
    offs = canvas.box(x0 + 3.0, y0 + 2.75, 2.1, 1.0, f"$a_{{j-i}}$\noffset clipped to ±c={clip}\n[T, T, {dh}]",
                      role="highlight", fontsize=fs)  # fmt: skip
    canvas.arrow(table.top, offs.bottom)
    score = canvas.box(
        x0 + 0.3, y0 + 4.05, 4.8, 0.9,
        r"$e_{ij} = q_i (k_j + a^K_{j-i})^\top / √d_\mathrm{head}$" + "\n" + r"$z_i = \sum_j \alpha_{ij} (v_j + a^V_{j-i})$",
        role="attention", fontsize=fs,
    )  # fmt: skip
    canvas.arrow(qkv.top, (qkv.top[0], score.y))
    canvas.arrow(offs.top, (offs.top[0], score.y))
    canvas.text(x0 + w / 2, y0 + 5.4, "learned, one pair of tables per layer;\noffsets beyond ±c share a vector",
                fontsize=note, italic=True)  # fmt: skip

    # bottom right: how to read the three panels
    canvas.text(
        xs[1] + 0.3, ys[1] + ph / 2,
        "Absolute positions enter once, below\nthe first layer: the layers see only\nthe sum xᵢ.\n\n"
        "Rotary and relative positions enter\ninside every attention layer, as a\nfunction of the offset "
        "between the\nquery and the key.",
        ha="left", fontsize=note, italic=True,
    )  # fmt: skip
    return canvas.done()
