"""Schematic of a BERT encoder as :mod:`lib.pretrained` builds it (chapter 9).

Bottom to top: three embeddings summed and normalised, ``L`` post-LN encoder layers (GELU), then
mean pooling over the real tokens and L2 normalisation (the sentence embedding). The labels carry
the numbers of a real configuration (a :class:`~lib.pretrained.BertConfig`, or a model's
``.config``) and, optionally, the length ``T`` of a real input.
"""

from __future__ import annotations

from matplotlib.figure import Figure

from .canvas import Canvas


def bert_encoder(config, T: int | str = "T", title: str | None = None) -> Figure:
    """Draw the encoder of ``config`` (a ``BertConfig`` or a model with ``.config``).

    ``T``: the sequence length written into the shapes (``"T"`` by default, or a real length).
    """
    config = getattr(config, "config", config)
    needed = (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "max_position_embeddings",
        "type_vocab_size",
        "layer_norm_eps",
    )
    absent = [name for name in needed if not hasattr(config, name)]
    if absent:
        raise TypeError(
            f"config must be a BertConfig (or a model with .config); {type(config).__name__} lacks {absent}"
        )
    d, H, L = config.hidden_size, config.num_attention_heads, config.num_hidden_layers
    d_ff, eps = config.intermediate_size, config.layer_norm_eps
    title = title or f"The BERT encoder lib builds: {L} layers, H = {H}\n$d_\\mathrm{{model}}$ = {d}"

    c = Canvas(11.5, 12.0, title=title, scale=0.6)  # 6.9 in: the page column, labels at their set size
    X, W = 3.0, 5.5  # the main column
    mid = X + W / 2

    # ---- input ids and the three embeddings
    ids = c.box(
        X + 1.0, 0.2, W - 2.0, 0.6, f"input_ids [B, {T}]   (+ attention_mask [B, {T}])", role="input", fontsize=8
    )
    emb_w = 1.7
    embs = []
    for i, (name, rows) in enumerate(
        (
            ("token", config.vocab_size),
            ("position", config.max_position_embeddings),
            ("token type", config.type_vocab_size),
        )
    ):
        x = X + i * (emb_w + 0.2)
        embs.append(c.box(x, 1.35, emb_w, 0.8, f"{name}\nembedding\n{rows:,} × {d}", role="value", fontsize=7))
        c.arrow(ids.top, embs[-1].bottom)
    plus = c.box(mid - 0.3, 2.6, 0.6, 0.5, "+", role="input", fontsize=12)
    for e in embs:
        c.arrow(e.top, plus.bottom)
    ln0 = c.box(X + 1.0, 3.45, W - 2.0, 0.55, f"embedding LayerNorm (eps {eps:g})", role="norm", fontsize=8)
    c.arrow(plus.top, ln0.bottom)
    c.text(X + W - 0.8, 3.72, f"X⁽⁰⁾ [B, {T}, {d}]\nno √d scaling", ha="left", fontsize=7.5, italic=True)

    # ---- one encoder layer, repeated L times (post-LN: norm after the residual sum)
    region = c.region(X - 0.35, 4.45, W + 0.7, 4.75, f"EncoderLayer × {L}  (post-LN, GELU)", role="encoder")
    heads = (
        f"MultiHeadAttention, {H} heads, padding masked\n"
        f"$d_\\mathrm{{head}}$ = {d // H}: $\\mathrm{{softmax}}(Q K^\\top / √{d // H})\\,V$"
    )
    attn = c.box(X + 0.6, 5.0, W - 1.2, 0.8, heads, role="attention", fontsize=7.5)
    c.arrow(ln0.top, attn.bottom)
    n1 = c.box(X + 0.6, 6.15, W - 1.2, 0.55, f"Add & LayerNorm  (norm1, eps {eps:g})", role="norm", fontsize=8)
    c.arrow(attn.top, n1.bottom)
    ff = c.box(X + 0.6, 7.05, W - 1.2, 0.8, f"FeedForward: {d} → {d_ff} → {d}\nGELU", role="ffn", fontsize=8)
    c.arrow(n1.top, ff.bottom)
    n2 = c.box(X + 0.6, 8.2, W - 1.2, 0.55, f"Add & LayerNorm  (norm2, eps {eps:g})", role="norm", fontsize=8)
    c.arrow(ff.top, n2.bottom)
    # residual paths: the sub-layer's input skips around it into the Add & LayerNorm
    for start_y, target in ((4.65, n1), (6.88, n2)):
        c.ax.plot(
            [mid, X + 0.25, X + 0.25],
            [start_y, start_y, target.center[1]],
            color="#222222",
            linewidth=1.1,
            linestyle="--",
        )
        c.arrow((X + 0.25, target.center[1]), target.left, dashed=True)
    c.text(X - 0.45, 5.9, "residual\n(dashed)", ha="right", fontsize=7.5, italic=True)
    c.text(
        region.x + region.w + 0.15,
        6.9,
        f"hidden states\n[B, {T}, {d}]\nin and out\nof every layer",
        ha="left",
        fontsize=7.5,
        italic=True,
    )

    # ---- outputs
    hidden = c.box(X + 1.0, 9.55, W - 2.0, 0.55, f"hidden states [B, {T}, {d}]", role="output", fontsize=8)
    c.arrow(n2.top, hidden.bottom)
    c.text(X - 0.2, 9.82, "model(input_ids,\nattention_mask)", ha="right", fontsize=7.5, italic=True)
    pool = c.box(X + 0.6, 10.45, W - 1.2, 0.55, "mean pooling over real tokens (mask)", role="output", fontsize=8)
    c.arrow(hidden.top, pool.bottom)
    norm = c.box(X + 1.0, 11.3, W - 2.0, 0.55, f"L2 normalise → [B, {d}]", role="output", fontsize=8)
    c.arrow(pool.top, norm.bottom)
    c.text(X - 0.2, 11.57, "sentence_embeddings(...)", ha="right", fontsize=7.5, italic=True)
    return c.done()
