"""The encoder-decoder Transformer of slide 27 (Vaswani et al., 2017, Figure 1), drawn from a model.

>>> from lib import Transformer, TransformerConfig
>>> from lib.book.diagrams import transformer_diagram
>>> transformer_diagram(Transformer(TransformerConfig(40, 40, d_model=64, n_heads=4)))

Every number on the figure is read off the model it is given: the depth of each stack, ``d_model``,
the number of heads, ``d_ff``, the vocabularies, the kind of positions, where the LayerNorm sits
(post-LN as in the paper, or pre-LN) and which embeddings are shared or tied.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from ...model.transformer import Transformer
from .canvas import Canvas, color

_COL_W = 4.2  # width of a stack's column
_ENC_X, _DEC_X = 0.8, 7.0
_BOX_H = 0.62
_GAP = 0.28


def _stack(
    c: Canvas, x: float, y: float, sublayers: list[tuple[str, str]], norm_first: bool, residual_role: str
) -> tuple[list, float]:
    """Draw one layer's sub-layers bottom-up from ``y``; return the boxes and the top y.

    Each sub-layer is ``(text, role)``. Post-LN: sub-layer, then "Add & Norm" with the residual
    arrow going around the sub-layer into it. Pre-LN: "LayerNorm", sub-layer, then "Add".
    """
    boxes = []
    for text, role in sublayers:
        start_y = y
        if norm_first:
            boxes.append(c.box(x + 0.5, y, _COL_W - 1.0, _BOX_H * 0.75, "LayerNorm", role="norm", fontsize=8))
            c.arrow((x + _COL_W / 2, y + _BOX_H * 0.75), (x + _COL_W / 2, y + _BOX_H * 0.75 + _GAP))
            y += _BOX_H * 0.75 + _GAP
        sub = c.box(x + 0.2, y, _COL_W - 0.4, _BOX_H, text, role=role, fontsize=8)
        boxes.append(sub)
        c.arrow(sub.top, (sub.top[0], sub.top[1] + _GAP))
        y += _BOX_H + _GAP
        add = c.box(
            x + 0.5, y, _COL_W - 1.0, _BOX_H * 0.75, "Add" if norm_first else "Add & Norm", role="norm", fontsize=8
        )
        boxes.append(add)
        # the residual connection: around the sub-layer, into the Add box
        c.arrow((x + 0.05, start_y - _GAP / 2), (add.x, add.center[1]), role=residual_role, curve=-0.35)
        y += _BOX_H * 0.75
        c.arrow((x + _COL_W / 2, y), (x + _COL_W / 2, y + _GAP))
        y += _GAP
    return boxes, y


def transformer_diagram(model, batch_size: str = "B") -> Figure:
    """Slide 27's architecture, labelled with ``model``'s configuration (a :class:`lib.Transformer`).

    Left the encoder stack (``n_encoder_layers`` × [self-attention, feed-forward]), right the decoder
    stack (``n_decoder_layers`` × [masked self-attention, cross-attention, feed-forward]), each
    sub-layer wrapped in a residual connection and a LayerNorm; at the bottom the embeddings,
    multiplied by √d_model, plus positions; at the top the output projection and the softmax.
    Dashed lines mark shared (source = target) and tied (output = target embedding) matrices.
    Shapes are written with ``batch_size`` for B, S for the source and T for the target length.
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a lib.Transformer, got {type(model).__name__}")
    cfg = model.config
    d, h, d_ff = cfg.d_model, cfg.n_heads, cfg.d_ff
    n_enc, n_dec = len(model.encoder_layers), len(model.decoder_layers)
    shared = model.src_embed is model.tgt_embed
    tied = model.out_proj.weight is model.tgt_embed.weight
    norm_first = cfg.norm_first
    B = batch_size

    enc_layer = [(f"Multi-head self-attention\nH={h}, $d_\\mathrm{{head}}$={d // h}", "attention")]
    dec_layer = [
        (f"Masked multi-head self-attention\nH={h} (causal mask)", "attention"),
        ("Cross-attention: Q from decoder,\nK, V from encoder memory", "key"),
        (f"Feed-forward  {d} → {d_ff} → {d}\nmax(0, xW₁+b₁)W₂+b₂", "ffn"),
    ]
    enc_layer.append(dec_layer[-1])
    per_sub = (_BOX_H * 0.75 + _GAP if norm_first else 0.0) + _BOX_H + _GAP + _BOX_H * 0.75 + _GAP
    width = _DEC_X + _COL_W + 1.35
    base_y = 3.35
    dec_top = base_y + 0.35 + 3 * per_sub + (0.9 if norm_first else 0.0)
    height = dec_top + 2.9
    placement = "pre-LN (Xiong et al., 2020)" if norm_first else "post-LN, as in the paper"
    c = Canvas(
        width,
        height,
        title=f"The Transformer (slide 27): {n_enc} + {n_dec} layers, {placement}\n$d_\\mathrm{{model}}$={d}",
        scale=0.55,  # 6.9 in: the page column, so the labels show at their set size
    )

    # --- inputs, embeddings, positions ----------------------------------------------------------
    cx_enc, cx_dec = _ENC_X + _COL_W / 2, _DEC_X + _COL_W / 2
    src = c.box(_ENC_X + 0.6, 0.2, _COL_W - 1.2, 0.6, f"source tokens  [{B}, S]", role="input", fontsize=8)
    tgt = c.box(
        _DEC_X + 0.6,
        0.2,
        _COL_W - 1.2,
        0.6,
        f"target, shifted right  [{B}, T]\n" r"$\langle\mathrm{bos}\rangle\ y_1 … y_{T-1}$",
        role="input",
        fontsize=7.5,
    )
    emb_text = "Embedding {v} × {d}\n× $√d_\\mathrm{{model}}$ = × {s:.3g}"
    src_emb, tgt_emb = (
        c.box(x + 0.2, 1.15, _COL_W - 0.4, 0.75, emb_text.format(v=vocab, d=d, s=d**0.5), role="input", fontsize=8)
        for x, vocab in ((_ENC_X, cfg.src_vocab_size), (_DEC_X, cfg.tgt_vocab_size))
    )
    c.arrow(src.top, src_emb.bottom)
    c.arrow(tgt.top, tgt_emb.bottom)
    pos = {
        "sinusoidal": "+ sinusoidal positions",
        "learned": "+ learned positions",
        "relative": "(relative positions, in attention)",
        "rotary": "(rotary positions, in attention)",
        "none": "(no positions)",
    }[cfg.position]
    for x, emb in ((_ENC_X, src_emb), (_DEC_X, tgt_emb)):
        p = c.box(x + 0.5, 2.25, _COL_W - 1.0, 0.55, pos, role="norm", fontsize=8)
        c.arrow(emb.top, p.bottom)
        c.arrow(p.top, (p.top[0], base_y + 0.02))
    if shared:
        c.arrow(
            src_emb.right,
            tgt_emb.left,
            style="<|-|>",
            dashed=True,
            role="highlight",
            text="one shared\nmatrix",
            fontsize=7.5,
        )

    # --- the two stacks ---------------------------------------------------------------------------
    def stack(x: float, sublayers, n: int, role: str, side: int):
        boxes, top = _stack(c, x, base_y + 0.35, sublayers, norm_first, "highlight")
        c.region(x - 0.15, base_y, _COL_W + 0.3, top - base_y + 0.05, role=role)
        label_x = x - 0.4 if side < 0 else x + _COL_W + 0.4
        c.ax.text(
            label_x,
            (base_y + top) / 2,
            f"{role} layer  × N = {n}",
            rotation=90,
            ha="center",
            va="center",
            fontsize=10,
            fontweight="bold",
            color=color(role),
        )
        top += 0.05
        if norm_first:  # pre-LN stacks end in one more LayerNorm
            c.arrow((x + _COL_W / 2, top), (x + _COL_W / 2, top + _GAP))
            final = c.box(x + 0.5, top + _GAP, _COL_W - 1.0, _BOX_H * 0.75, "final LayerNorm", role="norm", fontsize=8)
            top = final.top[1]
        return boxes, top

    _, enc_top = stack(_ENC_X, enc_layer, n_enc, "encoder", -1)
    dec_boxes, dec_top_drawn = stack(_DEC_X, dec_layer, n_dec, "decoder", +1)
    memory = c.box(
        _ENC_X + 0.4, enc_top + 0.45, _COL_W - 0.8, 0.6, f"memory  [{B}, S, {d}]", role="encoder", fontsize=8
    )
    c.arrow((cx_enc, enc_top), memory.bottom)
    cross = dec_boxes[4 if norm_first else 2]  # the cross-attention sub-layer
    c.arrow(memory.right, cross.left, role="key", text="K, V", curve=-0.15)

    # --- output -----------------------------------------------------------------------------------
    top = dec_top_drawn + 0.45
    linear = c.box(
        _DEC_X + 0.2,
        top,
        _COL_W - 0.4,
        0.7,
        f"Linear {d} → {cfg.tgt_vocab_size}" + ("\n(weights = target embedding)" if tied else ""),
        role="output",
        fontsize=8,
    )
    c.arrow((cx_dec, dec_top_drawn), linear.bottom)
    probabilities = f"$\\mathrm{{softmax}} → p(y_t \\mid y_{{<t}}, x)$\n[{B}, T, {cfg.tgt_vocab_size}]"
    soft = c.box(_DEC_X + 0.5, top + 1.05, _COL_W - 1.0, 0.6, probabilities, role="output", fontsize=7.5)
    c.arrow(linear.top, soft.bottom)
    if tied:
        right = _DEC_X + _COL_W + 0.7
        c.arrow(linear.right, (right, linear.center[1]), style="-", dashed=True, role="highlight")
        c.arrow((right, linear.center[1]), (right, tgt_emb.center[1]), style="-", dashed=True, role="highlight")
        c.arrow((right, tgt_emb.center[1]), tgt_emb.right, dashed=True, role="highlight")
        c.ax.text(
            right + 0.1,
            (tgt_emb.center[1] + linear.center[1]) / 2,
            "tied: one matrix",
            rotation=90,
            ha="left",
            va="center",
            fontsize=7.5,
            color=color("highlight"),
        )

    # --- a legend of the numbers ------------------------------------------------------------------
    n_params = sum(p.numel() for p in model.parameters())
    notes = [
        f"{n_params:,} parameters",
        f"$d_\\mathrm{{model}}$ = {d}, H = {h}, $d_\\mathrm{{ff}}$ = {d_ff}",
        f"dropout = {cfg.dropout}",
        "curved arrows: residual connections",
    ]
    if shared:
        notes.append("source/target embeddings shared")
    if tied:
        notes.append("output projection tied to embedding")
    c.text(_ENC_X, height - 0.35, "\n".join(notes), ha="left", va="top", fontsize=8)
    return c.done()
