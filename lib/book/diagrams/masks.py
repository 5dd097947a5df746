"""Schematics of chapter 5: the masks as grids, and the data flow of cross-attention.

- :func:`mask_grids` draws the look-ahead (causal) mask, a padding mask and their combination as
  ``T_q × T_k`` grids of may-attend cells (the book's convention: ``True`` = *may attend*).
- :func:`cross_attention_dataflow` draws where cross-attention's queries, keys and values come from,
  labelled with the shapes of a real forward pass of a :class:`~lib.model.transformer.Transformer`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from matplotlib.figure import Figure
from torch import Tensor

from ...model.checks import check_int, check_tensor
from ...model.masks import causal_mask, padding_mask
from ...model.transformer import Transformer
from .canvas import Canvas


def _check_tokens(name: str, tokens: Sequence[str]) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"{name} must be a list of token strings, got {tokens!r}")
    if len(tokens) == 0:
        raise ValueError(f"{name} must not be empty")
    return list(tokens)


def _grid(
    c: Canvas, x: float, y: float, mask: Tensor, rows: list[str], cols: list[str], role: str, title: str, cell: float
) -> None:
    """One mask as a grid: filled cell = may attend, blank = blocked; tokens on both sides."""
    frame = c.matrix(x, y, mask.size(0), mask.size(1), cell=cell, role=role, values=mask.float().tolist())
    for i, token in enumerate(rows):
        c.text(x - 0.08, y + (len(rows) - 1 - i + 0.5) * cell, token, ha="right", fontsize=8)
    for j, token in enumerate(cols):
        c.text(x + (j + 0.5) * cell, y + frame.h + 0.12, token, va="bottom", fontsize=8)
    c.text(frame.center[0], y + frame.h + 0.55, title, fontsize=9.5, bold=True)
    c.text(frame.center[0], y - 0.15, "key j (attended to) →", va="top", fontsize=8, italic=True)


def mask_grids(tokens: Sequence[str], n_pad: int = 2, pad: str = "pad") -> Figure:
    """The three masks of a decoder input of ``len(tokens)`` real tokens plus ``n_pad`` pads.

    Top left, the look-ahead mask ``causal_mask(T)``: query ``i`` may attend to keys ``j ≤ i``.
    Top right, the padding mask ``padding_mask(tokens, pad_id)``: every query may attend to the real
    keys, none to a pad (one row ``[1, 1, 1, T]``, broadcast over the queries).
    Bottom, their conjunction, what a padded decoder uses. Filled cell = ``True`` = may attend.
    The grids are computed with :func:`lib.causal_mask` and :func:`lib.padding_mask`. Two rows, drawn
    for the page column (about 7 in wide).
    """
    tokens = _check_tokens("tokens", tokens)
    check_int("n_pad", n_pad, minimum=0)
    names = tokens + [pad] * n_pad
    T = len(names)
    ids = torch.tensor([[1] * len(tokens) + [0] * n_pad])  # [1, T], pad id 0
    causal = causal_mask(T)  # [T, T]
    padding = padding_mask(ids, 0)[0, 0].expand(T, T)  # [1,1,1,T] -> [T, T]
    both = causal & padding
    cell = 0.42
    panel_w, panel_h = T * cell + 1.7, T * cell + 1.6
    width = 2 * panel_w + 0.4
    c = Canvas(
        width,
        2 * panel_h + 0.2,
        title="Masks are grids of may-attend cells (filled = True)",
        scale=min(0.9, 6.9 / width),
    )
    panels = [
        (causal, "query", "look-ahead: causal_mask(T)", 0, 1),
        (padding, "key", "padding: padding_mask(tokens)", 1, 1),
        (both, "output", "decoder with padding: both", 0, 0),
    ]
    for mask, role, title, column, row in panels:
        x = 1.5 + column * panel_w
        y = 0.55 + row * panel_h
        _grid(c, x, y, mask, names, names, role, title, cell)
    c.text(
        1.5 + panel_w + 0.2,
        0.55 + T * cell / 2,
        "rows: query i\ncolumns: key j\n(attended to)\n\nfilled: may attend\nblank: blocked",
        ha="left",
        fontsize=8.5,
        italic=True,
    )
    return c.done()


def cross_attention_dataflow(model: torch.nn.Module, src: Tensor, tgt: Tensor) -> Figure:
    """Where cross-attention's Q, K and V come from, with the shapes of ``model(src, tgt)``.

    Queries come from the decoder (``Q = X_dec W_Q``, one per target position), keys and values
    from the encoder's output, the *memory* (``K = M W_K``, ``V = M W_V``, one per source
    position); the weights ``softmax(Q Kᵀ / √d_head)`` are ``[B, H, T, S]``: for every target
    position, a distribution over the source. ``model`` is a :class:`lib.Transformer`,
    ``src [B, S]`` and ``tgt [B, T]`` token ids (only their shapes are used). Drawn for the page
    column (about 7 in wide).
    """
    if not isinstance(model, Transformer):
        raise TypeError(f"model must be a lib.Transformer, got {type(model).__name__}")
    for name, x in (("src", src), ("tgt", tgt)):
        check_tensor(name, x)
        if x.dim() != 2:
            raise ValueError(f"{name} must be a [B, L] tensor of token ids, got {tuple(x.shape)}")
    if src.size(0) != tgt.size(0):
        raise ValueError(f"src and tgt must share the batch size, got {src.size(0)} and {tgt.size(0)}")
    cfg = model.config
    B, S, T = src.size(0), src.size(1), tgt.size(1)
    d, H = cfg.d_model, cfg.n_heads
    dh = d // H
    width = 9.8
    c = Canvas(width, 6.5, title="Cross-attention: queries from the decoder,\nkeys and values from the encoder",
               scale=6.9 / width)  # fmt: skip
    fs = 8  # every label at least 7.5 pt: the figure is shown at its natural size

    # encoder column (left)
    c.region(0.2, 0.3, 2.7, 5.9, f"encoder × {cfg.n_encoder_layers}", role="encoder")
    s = c.box(0.4, 0.7, 2.3, 0.9, f"source tokens\nsrc [B={B}, S={S}]", role="input", fontsize=fs)
    enc = c.box(
        0.4, 2.2, 2.3, 1.2, "self-attention\n(no look-ahead mask,\npadding mask\non keys)", role="encoder", fontsize=fs
    )
    mem = c.box(
        0.4, 4.1, 2.3, 1.2, f"memory M\n[B, S, $d_\\mathrm{{model}}$]\n= [{B}, {S}, {d}]", role="encoder", fontsize=fs
    )
    c.arrow(s.top, enc.bottom)
    c.arrow(enc.top, mem.bottom)

    # decoder column (right)
    c.region(6.9, 0.3, 2.7, 5.9, f"decoder × {cfg.n_decoder_layers}", role="decoder")
    t = c.box(7.1, 0.7, 2.3, 0.9, f"target so far\ntgt [B={B}, T={T}]", role="input", fontsize=fs)
    dec = c.box(7.1, 2.2, 2.3, 1.2, "masked\nself-attention\n(look-ahead mask)", role="decoder", fontsize=fs)
    out = c.box(7.1, 4.8, 2.3, 1.1, f"+ cross-attn output\n[B, T, $d_\\mathrm{{model}}$]\n= [{B}, {T}, {d}]", role="output",
                fontsize=fs)  # fmt: skip
    c.arrow(t.top, dec.bottom)

    # cross-attention in the middle: keys and values (left), queries, weights and output (right)
    k = c.box(
        3.1,
        3.4,
        1.75,
        1.1,
        f"$K = M W_K$\n[B, H, S, $d_\\mathrm{{head}}$]\n= [{B}, {H}, {S}, {dh}]",
        role="key",
        fontsize=7.5,
    )
    v = c.box(3.1, 4.8, 1.75, 1.1, f"$V = M W_V$\n[B, H, S, $d_\\mathrm{{head}}$]\n= [{B}, {H}, {S}, {dh}]", role="value",
              fontsize=7.5)  # fmt: skip
    q = c.box(5.0, 2.0, 1.75, 1.1, f"$Q = X_\\mathrm{{dec}} W_Q$\n[B, H, T, $d_\\mathrm{{head}}$]\n= [{B}, {H}, {T}, {dh}]", role="query",
              fontsize=7.5)  # fmt: skip
    w = c.box(5.0, 3.4, 1.75, 1.1, f"$\\mathrm{{softmax}}(QK^\\top/√d_\\mathrm{{head}})$\n[B, H, T, S]\n= [{B}, {H}, {T}, {S}]", role="attention",
              fontsize=7.5)  # fmt: skip
    av = c.box(5.0, 4.8, 1.75, 1.1, "weights · V,\nheads merged,\n· $W_O$", role="output", fontsize=7.5)
    c.arrow(dec.left, q.right, role="query")
    c.arrow(mem.right, k.left, role="key")
    c.arrow(mem.right, v.left, role="value")
    c.arrow(q.top, w.bottom, role="query")
    c.arrow(k.right, w.left, role="key")
    c.arrow(w.top, av.bottom, role="attention")
    c.arrow(v.right, av.left, role="value")
    c.arrow(av.right, out.left, role="output")
    c.text(
        3.0,
        1.25,
        "every target position t asks:\nwhich source positions\nhold what I need?",
        fontsize=fs,
        italic=True,
        ha="left",
    )
    return c.done()
