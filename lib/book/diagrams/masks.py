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

    Left, the look-ahead mask ``causal_mask(T)``: query ``i`` may attend to keys ``j ≤ i``.
    Middle, the padding mask ``padding_mask(tokens, pad_id)``: every query may attend to the real
    keys, none to a pad (one row ``[1, 1, 1, T]``, broadcast over the queries).
    Right, their conjunction, what a padded decoder uses. Filled cell = ``True`` = may attend.
    The grids are computed with :func:`lib.causal_mask` and :func:`lib.padding_mask`.
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
    width = 3 * (T * cell + 1.6) + 0.4
    c = Canvas(width, T * cell + 2.0, title="Masks are grids of may-attend cells (filled = True)")
    y = 0.75
    panels = [
        (causal, "query", "look-ahead: causal_mask(T)"),
        (padding, "key", "padding: padding_mask(tokens)"),
        (both, "output", "decoder with padding: both"),
    ]
    for k, (mask, role, title) in enumerate(panels):
        x = 1.4 + k * (T * cell + 1.6)
        _grid(c, x, y, mask, names, names, role, title, cell)
    c.text(0.15, y + T * cell / 2, "query i ↓", fontsize=8, italic=True, ha="left")
    return c.done()


def cross_attention_dataflow(model: torch.nn.Module, src: Tensor, tgt: Tensor) -> Figure:
    """Where cross-attention's Q, K and V come from, with the shapes of ``model(src, tgt)``.

    Queries come from the decoder (``Q = X_dec W_Q``, one per target position), keys and values
    from the encoder's output, the *memory* (``K = M W_K``, ``V = M W_V``, one per source
    position); the weights ``softmax(Q Kᵀ / √d_head)`` are ``[B, H, T, S]``: for every target
    position, a distribution over the source. ``model`` is a :class:`lib.Transformer`,
    ``src [B, S]`` and ``tgt [B, T]`` token ids (only their shapes are used).
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
    c = Canvas(13.2, 6.6, title="Cross-attention: queries from the decoder, keys and values from the encoder")

    # encoder column (left)
    c.region(0.2, 0.3, 3.6, 5.6, f"encoder × {cfg.n_encoder_layers}", role="encoder")
    s = c.box(0.6, 0.7, 2.8, 0.8, f"source tokens\nsrc [B={B}, S={S}]", role="input")
    enc = c.box(
        0.6, 2.3, 2.8, 1.0, "self-attention\n(no look-ahead mask,\npadding mask on keys)", role="encoder", fontsize=8.5
    )
    mem = c.box(0.6, 4.1, 2.8, 0.9, f"memory M\n[B, S, d] = [{B}, {S}, {d}]", role="encoder")
    c.arrow(s.top, enc.bottom)
    c.arrow(enc.top, mem.bottom)

    # decoder column (right)
    c.region(9.4, 0.3, 3.6, 5.6, f"decoder × {cfg.n_decoder_layers}", role="decoder")
    t = c.box(9.8, 0.7, 2.8, 0.8, f"target so far\ntgt [B={B}, T={T}]", role="input")
    dec = c.box(9.8, 2.3, 2.8, 1.0, "masked self-attention\n(look-ahead mask)", role="decoder", fontsize=8.5)
    out = c.box(9.8, 4.1, 2.8, 0.9, f"+ cross-attn output\n[B, T, d] = [{B}, {T}, {d}]", role="output", fontsize=8.5)
    c.arrow(t.top, dec.bottom)

    # cross-attention in the middle
    q = c.box(6.3, 2.3, 2.4, 0.9, f"Q = X_dec W_Q\n[B, H, T, d_h] = [{B}, {H}, {T}, {dh}]", role="query", fontsize=8)
    k = c.box(4.4, 3.7, 2.3, 0.9, f"K = M W_K\n[{B}, {H}, {S}, {dh}]", role="key", fontsize=8)
    v = c.box(4.4, 4.85, 2.3, 0.9, f"V = M W_V\n[{B}, {H}, {S}, {dh}]", role="value", fontsize=8)
    w = c.box(
        7.0, 3.7, 2.1, 0.9, f"softmax(Q Kᵀ/√d_h)\n[B, H, T, S] = [{B}, {H}, {T}, {S}]", role="attention", fontsize=7.5
    )
    c.arrow(dec.left, q.right, role="query")
    c.arrow(mem.right, k.left, role="key")
    c.arrow(mem.right, v.left, role="value")
    c.arrow(q.top, (w.x + 0.5, w.y), role="query")
    c.arrow(k.right, w.left, role="key")
    av = c.box(7.0, 4.85, 2.1, 0.9, "weights · V, heads\nmerged, · W_O", role="output", fontsize=8)
    c.arrow(w.top, av.bottom, role="attention")
    c.arrow(v.right, av.left, role="value")
    c.arrow(av.right, out.left, role="output")
    c.text(
        4.4,
        1.4,
        "every target position t asks:\nwhich source positions hold what I need?",
        fontsize=8.5,
        italic=True,
        ha="left",
    )
    return c.done()
