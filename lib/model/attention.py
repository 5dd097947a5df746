"""Scaled dot-product attention and multi-head attention.

Notation (the lecture's): queries ``Q``, keys ``K``, values ``V``; ``d_k`` the key width;
``H`` heads of width ``d_head = d_model / H``.
Masks are boolean, ``True`` = *this query may attend to this key* (see ``lib.model.masks``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .checks import check_int, check_number, check_tensor
from .masks import check_mask, is_causal_mask, masked_softmax
from .positions import RelativePositionEmbedding, RotaryEmbedding


def scaled_dot_product_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Tensor | None = None,
    dropout_p: float = 0.0,
    scale: float | None = None,
    bias: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Attention written out, the way the lecture writes it.

    .. math::
        \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V

    Shapes: ``q [..., T_q, d_k]``, ``k [..., T_k, d_k]``, ``v [..., T_k, d_v]``;
    ``mask`` (bool, ``True`` = may attend) broadcasts to ``[..., T_q, T_k]``;
    ``bias`` (float, optional) is added to the scores before the softmax.
    Returns ``out [..., T_q, d_v]`` and the weights ``[..., T_q, T_k]`` (before dropout).

    A fully masked query row gets all-zero weights and a zero output (never NaN).
    """
    if q.dim() < 2 or k.dim() < 2 or v.dim() < 2:
        raise ValueError(
            f"q, k, v need at least 2 dims [..., T, d], got {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}"
        )
    if q.size(-1) != k.size(-1):
        raise ValueError(f"q has d_k={q.size(-1)} but k has d_k={k.size(-1)}; they must match")
    if k.size(-2) != v.size(-2):
        raise ValueError(f"k has T_k={k.size(-2)} but v has T_k={v.size(-2)}; they must match")
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale

    scores = (q @ k.transpose(-2, -1)) * scale  # [..., T_q, T_k]
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        if mask.dtype != torch.bool:
            raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
        try:
            torch.broadcast_shapes(mask.shape, scores.shape)
        except RuntimeError:
            raise ValueError(
                f"mask of shape {tuple(mask.shape)} does not broadcast to the scores "
                f"[..., T_q, T_k] = {tuple(scores.shape)}"
            ) from None
    weights = masked_softmax(scores, mask)  # fully masked rows -> 0
    dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


@dataclass
class KVCache:
    """The keys and values one attention layer has already computed, ``[B, H, T, d_head]``.

    Self-attention appends the new token's key and value at every decoding step;
    cross-attention (``static=True``) computes them from the encoder memory once.
    """

    k: Tensor | None = None
    v: Tensor | None = None
    static: bool = False

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.size(-2)

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append ``k, v`` (or store them, for a static cache) and return everything so far."""
        if self.k is None or self.static:
            self.k, self.v = k, v
        else:
            self.k, self.v = torch.cat([self.k, k], dim=-2), torch.cat([self.v, v], dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` (beam search picks which hypotheses survive)."""
        if self.k is not None:
            self.k, self.v = self.k.index_select(0, index), self.v.index_select(0, index)


AttentionKernel = Callable[[Tensor, Tensor, Tensor, "Tensor | None", bool, float], Tensor]
"""``kernel(q, k, v, mask, is_causal, scale) -> out``, all ``[B, H, T, d_head]`` (see :class:`MultiHeadAttention`)."""


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention (Vaswani et al., 2017, §3.2.2).

    .. math::
        \mathrm{head}_h = \mathrm{Attention}(X_q W^Q_h, X_k W^K_h, X_v W^V_h), \qquad
        \mathrm{MultiHead} = [\mathrm{head}_1; \dots; \mathrm{head}_H]\, W^O

    The ``H`` projections ``W^Q_h`` are the column blocks of one ``nn.Linear(d_model, d_model)``
    (``q_proj``), and likewise for ``k_proj``, ``v_proj``; ``out_proj`` is ``W^O``.

    ``forward(query [B, T_q, d], key [B, T_k, d], value [B, T_k, d], mask=None,
    need_weights=True) -> (out [B, T_q, d], weights [B, H, T_q, T_k] or None)``.

    - ``need_weights=True``: the explicit path, :func:`scaled_dot_product_attention`.
    - ``need_weights=False``: PyTorch's fused ``F.scaled_dot_product_attention``.
    - ``is_causal=True``: add the look-ahead mask (fused kernels skip the masked half).
      A ``mask`` equal to :func:`~lib.model.masks.causal_mask` is recognised and handled the same way.
    - ``cache``: a :class:`KVCache` for incremental decoding.
    - ``position``: a :class:`RotaryEmbedding` (rotates ``q`` and ``k``) or a
      :class:`RelativePositionEmbedding` (Shaw et al.; always takes the explicit path).
    - ``scale``: the factor on ``q·k`` before the softmax, on both paths; default ``1/√d_head``.
      ``scale=1.0`` gives unscaled dot-product attention (the scaling chapter's comparison).

    **The one switch for efficient attention** is the attribute ``kernel`` (default ``None``).
    Set it to a callable ``kernel(q, k, v, mask, is_causal, scale) -> out`` and it replaces the
    attention computation on both paths; ``q [B, H, T_q, d_head]``, ``k, v [B, H, T_k, d_head]``
    (already projected, split into heads, rotated by RoPE, and including a cache's earlier keys);
    ``mask`` is ``None`` or bool broadcasting to ``[B, H, T_q, T_k]`` with the book's meaning
    (``True`` = may attend; any look-ahead mask of a cached step is already folded in);
    ``is_causal=True`` only with ``mask=None`` and ``T_q == T_k``; ``scale`` a float.
    It returns ``out [B, H, T_q, d_head]``.  With a kernel there are no weights to return or record
    (``weights`` is ``None``) and attention dropout is the kernel's business.  Relative positions
    (Shaw et al.) add terms inside the softmax that a kernel cannot see: the combination is refused.
    Every layer of a model gets it with ``for m in model.modules(): if isinstance(m,
    MultiHeadAttention): m.kernel = my_kernel``.

    ``head_mask`` (default ``None``): a float tensor ``[H]`` that multiplies each head's output
    before the heads are concatenated; zeros remove heads (head ablation).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        position: RotaryEmbedding | RelativePositionEmbedding | None = None,
        scale: float | None = None,
    ):
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        check_int("n_heads", n_heads, minimum=1)
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        check_number("dropout", dropout, 0.0, 1.0, high_open=True)
        if position is not None and not isinstance(position, (RotaryEmbedding, RelativePositionEmbedding)):
            raise TypeError(
                f"position must be a RotaryEmbedding, a RelativePositionEmbedding or None, "
                f"got {type(position).__name__}"
            )
        if scale is not None:
            check_number("scale", scale, 0.0, math.inf, low_open=True, high_open=True)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.dropout = dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.position = position
        self.scale = None if scale is None else float(scale)  # the factor on q·k; None: 1/sqrt(d_head)
        self.kernel: AttentionKernel | None = None  # the efficient-attention switch
        self.head_mask: Tensor | None = None  # [H] floats, multiplies each head
        self.record = False  # set by `record_attention`
        self.last_weights: Tensor | None = None

    def split_heads(self, x: Tensor) -> Tensor:
        """``[B, T, d_model] -> [B, H, T, d_head]``."""
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """``[B, H, T, d_head] -> [B, T, d_model]`` (the concatenation of the heads)."""
        B, H, T, d_head = x.shape
        return x.transpose(1, 2).reshape(B, T, H * d_head)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        need_weights: bool = True,
        is_causal: bool = False,
        cache: KVCache | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        self._check_inputs(query, key, value)
        past = 0 if cache is None or cache.static else len(cache)
        q = self.split_heads(self.q_proj(query))  # [B, H, T_q, d_head]
        if cache is not None and cache.static and cache.k is not None:
            k, v = cache.k, cache.v  # cross-attention: reuse
        else:
            k = self.split_heads(self.k_proj(key))  # [B, H, T_k, d_head]
            v = self.split_heads(self.v_proj(value))
            if isinstance(self.position, RotaryEmbedding):
                k = self.position(k, torch.arange(past, past + k.size(-2), device=k.device))
            if cache is not None:
                k, v = cache.update(k, v)
        if isinstance(self.position, RotaryEmbedding):
            q = self.position(q, torch.arange(past, past + q.size(-2), device=q.device))

        B, T_q, T_k = query.size(0), q.size(-2), k.size(-2)
        if mask is not None:
            checked = check_mask(mask, (B, self.n_heads, T_q, T_k))
            if is_causal_mask(mask):  # the look-ahead mask itself: let the kernel skip it
                checked, is_causal = None, True
            mask = checked
        fused_causal = is_causal and mask is None and T_q == T_k
        if is_causal and not fused_causal:
            # queries are the last T_q of the T_k positions (a cache holds the first ones)
            causal = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)
            mask = causal if mask is None else mask & causal
        dropout_p = self.dropout if self.training else 0.0
        scale = 1.0 / math.sqrt(self.d_head) if self.scale is None else self.scale

        weights = None
        if self.kernel is not None:
            if isinstance(self.position, RelativePositionEmbedding):
                raise ValueError(
                    "a kernel cannot be combined with relative positions (position=RelativePositionEmbedding)"
                )
            out = self.kernel(q, k, v, mask, fused_causal, scale)
        elif need_weights or self.record or isinstance(self.position, RelativePositionEmbedding):
            out, weights = self._explicit(q, k, v, mask, dropout_p, fused_causal, scale)
            if self.record:
                self.last_weights = weights.detach()
        else:
            out = self._fused(q, k, v, mask, dropout_p, fused_causal, scale)
        if self.head_mask is not None:
            out = out * self._checked_head_mask(out)[:, None, None]  # [H] -> [H, 1, 1]
        out = self.out_proj(self.merge_heads(out))
        return out, (weights if need_weights else None)

    def _explicit(self, q, k, v, mask, dropout_p, causal, scale):
        if causal:
            mask = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool, device=q.device).tril()
        if not isinstance(self.position, RelativePositionEmbedding):
            return scaled_dot_product_attention(q, k, v, mask, dropout_p, scale=scale)
        a_k, a_v = self.position(q.size(-2), k.size(-2))  # [T_q, T_k, d_head]
        bias = torch.einsum("bhqd,qkd->bhqk", q, a_k) * scale
        out, weights = scaled_dot_product_attention(q, k, v, mask, dropout_p, scale=scale, bias=bias)
        return out + torch.einsum("bhqk,qkd->bhqd", weights, a_v), weights

    @staticmethod
    def _fused(q, k, v, mask, dropout_p, causal, scale):
        if mask is None:
            return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=causal, scale=scale)
        # A fully masked row would give NaN in the kernel: let it attend anywhere, then zero it.
        row_ok = mask.any(dim=-1, keepdim=True)  # [.., T_q, 1]
        if mask.device.type == "cpu" and bool(row_ok.all()):  # the usual case, free to test
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p, scale=scale)
        # (On an accelerator the test would synchronise host and device in every layer: fix up always.)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~row_ok, dropout_p=dropout_p, scale=scale)
        return out.masked_fill(~row_ok, 0.0)

    def _checked_head_mask(self, out: Tensor) -> Tensor:
        m = check_tensor("head_mask", self.head_mask)
        if not m.dtype.is_floating_point or m.shape != (self.n_heads,):
            raise ValueError(
                f"head_mask of shape {tuple(m.shape)} and dtype {m.dtype} should be a float tensor [H={self.n_heads}]"
            )
        return m.to(out.dtype)

    def _check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_tensor(name, x)
            if x.dim() != 3 or x.size(-1) != self.d_model:
                raise ValueError(f"{name} of shape {tuple(x.shape)} should be [B, T, d_model={self.d_model}]")
        if key.shape[:2] != value.shape[:2] or key.size(0) != query.size(0):
            raise ValueError(
                f"query {tuple(query.shape)}, key {tuple(key.shape)} and value {tuple(value.shape)} "
                f"must share B, and key and value must share T_k"
            )


@contextmanager
def record_attention(model: nn.Module) -> Iterator[dict[str, Tensor]]:
    """Record the attention weights of every :class:`MultiHeadAttention` in ``model``.

    >>> with record_attention(model) as maps:
    ...     model(src, tgt)
    >>> maps["encoder_layers.0.self_attn"].shape   # [B, H, T_q, T_k]

    Inside the block every attention layer takes the explicit path.
    """
    modules = {name: m for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)}
    maps: dict[str, Tensor] = {}
    for m in modules.values():
        m.record, m.last_weights = True, None
    try:
        yield maps
    finally:
        for name, m in modules.items():
            m.record = False
            if m.last_weights is not None:
                maps[name] = m.last_weights
            m.last_weights = None
