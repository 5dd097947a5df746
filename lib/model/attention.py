"""Scaled dot-product attention and multi-head attention (``H`` heads of width ``d_head = d_model / H``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .checks import check_int, check_number, check_tensor
from .masks import causal_mask, check_mask, masked_softmax
from .positions import RelativePositionEmbedding, RotaryEmbedding


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None,
                                 dropout_p: float = 0.0, scale: float | None = None) -> tuple[Tensor, Tensor]:  # fmt: skip
    r"""Attention written out, the way the lecture writes it.

    .. math::
        \mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V

    ``q [.., T_q, d_k]``, ``k [.., T_k, d_k]``, ``v [.., T_k, d_v]``, ``mask [.., T_q, T_k]`` ->
    ``out [.., T_q, d_v]``, weights ``[.., T_q, T_k]``. A fully masked row gives 0.
    """
    if q.size(-1) != k.size(-1):
        raise ValueError(f"q has d_k={q.size(-1)} but k has d_k={k.size(-1)}; they must match")
    if k.size(-2) != v.size(-2):
        raise ValueError(f"k has T_k={k.size(-2)} but v has T_k={v.size(-2)}; they must match")
    if mask is not None:
        check_mask(mask, (*q.shape[:-1], k.size(-2)))
    scale = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    scores = (q @ k.transpose(-2, -1)) * scale  # [..., T_q, T_k]
    weights = masked_softmax(scores, mask)  # fully masked rows -> 0
    dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
    return dropped @ v, weights


def fused_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, dropout_p: float, is_causal: bool, scale: float
):
    """The same with PyTorch's fused kernel (no weights); a fully masked row attends anywhere, then is zeroed."""
    if mask is None:
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal, scale=scale)
    row_ok = mask.any(dim=-1, keepdim=True)  # [.., T_q, 1]
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask | ~row_ok, dropout_p=dropout_p, scale=scale)
    return out.masked_fill(~row_ok, 0.0)


@dataclass
class KVCache:
    """One layer's keys and values ``[B, H, T, d_head]``: appended every step, or (``static``) computed once."""

    k: Tensor | None = None
    v: Tensor | None = None
    static: bool = False

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.size(-2)

    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        if self.k is None or self.static:
            self.k, self.v = k, v
        else:
            self.k, self.v = torch.cat([self.k, k], dim=-2), torch.cat([self.v, v], dim=-2)
        return self.k, self.v

    def reorder(self, index: Tensor) -> None:
        if self.k is not None:  # keep batch rows ``index`` (beam search)
            self.k, self.v = self.k.index_select(0, index), self.v.index_select(0, index)


class MultiHeadAttention(nn.Module):
    r"""Multi-head attention (Vaswani et al., 2017, §3.2.2).

    .. math::
        \mathrm{head}_h = \mathrm{Attention}(X_q W_{Q,h}, X_k W_{K,h}, X_v W_{V,h}), \qquad
        \mathrm{MultiHead} = [\mathrm{head}_1; \dots; \mathrm{head}_H]\, W_O

    ``q_proj`` holds the ``W_{Q,h}`` as column blocks (so do ``k_proj``, ``v_proj``); ``out_proj`` is ``W_O``.
    ``forward(query [B, T_q, d], key, value [B, T_k, d], mask=None, need_weights=True, is_causal=False,
    cache=None) -> (out [B, T_q, d], weights [B, H, T_q, T_k] or None)``. ``rotary``: RoPE on ``q, k``;
    ``scale``: default ``1/√d_head``; ``kernel``: a callable ``(q, k, v, mask, is_causal, scale) -> out``
    that replaces the attention step (efficient attention, :mod:`lib.efficient`); one that computes the
    same softmax over the scores says so with an attribute ``shift_invariant = True`` (training then
    gives the key bias, which gets no gradient, an exact zero: ``lib.training.step.inert_parameters``).
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float = 0.0, bias: bool = True,
                 rotary: RotaryEmbedding | None = None, scale: float | None = None):  # fmt: skip
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        if d_model % check_int("n_heads", n_heads, minimum=1):
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.dropout = check_number("dropout", dropout, 0.0, 1.0, high_open=True)
        if rotary is not None and not isinstance(rotary, RotaryEmbedding):
            raise TypeError(f"rotary must be a RotaryEmbedding or None, got {type(rotary).__name__}")
        if scale is not None:
            check_number("scale", scale, 0.0, math.inf, low_open=True, high_open=True)
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.rotary, self.scale = rotary, 1.0 / math.sqrt(self.d_head) if scale is None else float(scale)
        self.kernel = None  # the efficient-attention switch

    def split_heads(self, x: Tensor) -> Tensor:
        """``[B, T, d_model] -> [B, H, T, d_head]``."""
        B, T, _ = x.shape
        return x.view(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def merge_heads(self, x: Tensor) -> Tensor:
        """``[B, H, T, d_head] -> [B, T, d_model]`` (the concatenation of the heads)."""
        B, H, T, d_head = x.shape
        return x.transpose(1, 2).reshape(B, T, H * d_head)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, need_weights: bool = True,
                is_causal: bool = False, cache: KVCache | None = None) -> tuple[Tensor, Tensor | None]:  # fmt: skip
        self.check_inputs(query, key, value)
        q = self.split_heads(self.q_proj(query))  # [B, H, T_q, d_head]
        if cache is not None and cache.static and len(cache):  # cross-attention: memory projected once
            k, v = cache.k, cache.v
        else:
            k = self.split_heads(self.k_proj(key))  # [B, H, T_k, d_head]
            v = self.split_heads(self.v_proj(value))
        past = 0 if cache is None or cache.static else len(cache)  # positions already in the cache
        if self.rotary is not None:
            q, k = self.rotary(q, past), self.rotary(k, past)
        if cache is not None:
            k, v = cache.update(k, v)
        T_q, T_k = q.size(-2), k.size(-2)
        if mask is not None:
            check_mask(mask, (query.size(0), self.n_heads, T_q, T_k))
        if is_causal and (mask is not None or T_q != T_k):  # fold the look-ahead mask in
            look_ahead = causal_mask(T_q, q.device, T_k)
            mask, is_causal = look_ahead if mask is None else mask & look_ahead, False
        out, weights = self.attend(q, k, v, mask, is_causal, need_weights)  # [B, H, T_q, d_head]
        return self.out_proj(self.merge_heads(out)), weights

    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, is_causal: bool, need_weights: bool):
        """``softmax(q kᵀ · scale) v`` per head: the kernel, the equation (with weights) or the fused kernel."""
        dropout_p = self.dropout if self.training else 0.0
        if self.kernel is not None:
            return self.kernel(q, k, v, mask, is_causal, self.scale), None
        if need_weights:
            mask = causal_mask(q.size(-2), q.device) if is_causal else mask
            return scaled_dot_product_attention(q, k, v, mask, dropout_p, self.scale)
        return fused_attention(q, k, v, mask, dropout_p, is_causal, self.scale), None

    def check_inputs(self, query: Tensor, key: Tensor, value: Tensor) -> None:
        for name, x in (("query", query), ("key", key), ("value", value)):
            if check_tensor(name, x).dim() != 3 or x.size(-1) != self.d_model:
                raise ValueError(f"{name} of shape {tuple(x.shape)} should be [B, T, d_model={self.d_model}]")
        if key.shape[:2] != value.shape[:2] or key.size(0) != query.size(0):
            shapes = f"query {tuple(query.shape)}, key {tuple(key.shape)} and value {tuple(value.shape)}"
            raise ValueError(f"{shapes} must share B, and key and value must share T_k")


def attention_layers(model: nn.Module) -> dict[str, MultiHeadAttention]:
    """Every :class:`MultiHeadAttention` in ``model``, by module name (``"layers.0.self_attn"``)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return {name: m for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)}


class RelativeMultiHeadAttention(MultiHeadAttention):
    r"""Self-attention with relative positions (Shaw et al., 2018), tables ``relative`` (``k = max_distance``).

    .. math::
        e_{ij} = \frac{q_i \cdot (k_j + a^K_{ij})}{\sqrt{d_k}}, \qquad z_i = \sum_j \alpha_{ij} (v_j + a^V_{ij})
    """

    def __init__(self, d_model: int, n_heads: int, max_distance: int = 16, **kwargs):  # kwargs: as the base's
        check_int("n_heads", n_heads, minimum=1)
        relative = RelativePositionEmbedding(max(d_model // n_heads, 1), max_distance)  # first: the init order
        super().__init__(d_model, n_heads, **kwargs)
        self.relative = relative

    def attend(self, q, k, v, mask, is_causal, need_weights):
        if self.kernel is not None:
            raise ValueError("a kernel cannot be combined with relative positions (RelativeMultiHeadAttention)")
        mask = causal_mask(q.size(-2), q.device) if is_causal else mask
        a_k, a_v = self.relative(q.size(-2), k.size(-2))  # [T_q, T_k, d_head]
        scores = (q @ k.transpose(-2, -1) + torch.einsum("bhqd,qkd->bhqk", q, a_k)) * self.scale  # e_ij
        alpha = masked_softmax(scores, mask)
        dropped = F.dropout(alpha, self.dropout) if self.training and self.dropout > 0 else alpha  # one α for both
        return dropped @ v + torch.einsum("bhqk,qkd->bhqd", dropped, a_v), alpha
