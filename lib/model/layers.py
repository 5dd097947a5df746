"""The Transformer's layers; with ReLU and no dropout they compute what ``nn.TransformerEncoderLayer``
and ``nn.TransformerDecoderLayer`` compute."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention
from .checks import check_choice, check_int, check_number

ACTIVATIONS = MappingProxyType({"relu": F.relu, "gelu": F.gelu})


def residual(x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: nn.Module, dropout: nn.Module, norm_first: bool):
    """The residual connection and LayerNorm around every sub-layer: pre-LN (Xiong et al., 2020)
    ``x + Dropout(Sublayer(LN(x)))`` or post-LN (the paper's) ``LN(x + Dropout(Sublayer(x)))``."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class FeedForward(nn.Module):
    r"""The position-wise feed-forward network, ``[B, T, d_model] -> [B, T, d_model]`` through ``d_ff``.

    .. math::
        \mathrm{FFN}(x) = \max(0, x W_1 + b_1)\, W_2 + b_2
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        self.linear1 = nn.Linear(check_int("d_model", d_model, minimum=1), check_int("d_ff", d_ff, minimum=1))
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATIONS[check_choice("activation", activation, sorted(ACTIVATIONS))]
        self.dropout = nn.Dropout(check_number("dropout", dropout, 0.0, 1.0, high_open=True))

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


@dataclass
class LayerCache:
    """One decoder layer's caches: self-attention's, and cross-attention's (static)."""

    self_attn: KVCache = field(default_factory=KVCache)
    cross_attn: KVCache = field(default_factory=lambda: KVCache(static=True))

    def __len__(self) -> int:
        return len(self.self_attn)

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` of both caches (beam search)."""
        self.self_attn.reorder(index)
        self.cross_attn.reorder(index)


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward: ``forward(x [B, T, d], mask=None, is_causal=False, cache=None)``.
    Submodules ``self_attn`` (default: a plain :class:`~lib.model.attention.MultiHeadAttention`; pass one with
    positions), ``ff``, ``norm1``, ``norm2``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = False,
                 activation: str = "relu", layer_norm_eps: float = 1e-5,
                 self_attn: MultiHeadAttention | None = None):  # fmt: skip
        super().__init__()
        check_number("layer_norm_eps", layer_norm_eps, 0.0, math.inf, low_open=True, high_open=True)
        self.self_attn = self_attn or MultiHeadAttention(d_model, n_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1, self.dropout2 = nn.Dropout(dropout), nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: Tensor, mask: Tensor | None = None, is_causal: bool = False, cache: KVCache | None = None):
        attend = lambda h: self.self_attn(h, h, h, mask, need_weights=False, is_causal=is_causal, cache=cache)[0]
        x = residual(x, attend, self.norm1, self.dropout1, self.norm_first)
        return residual(x, self.ff, self.norm2, self.dropout2, self.norm_first)


class DecoderOnlyLayer(EncoderLayer):
    """The block of a decoder-only (GPT) LM: an encoder layer with causal self-attention."""

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:  # type: ignore[override]
        return super().forward(x, is_causal=True, cache=cache)


class DecoderLayer(EncoderLayer):
    """Masked self-attention, cross-attention to the encoder's memory, feed-forward. The encoder layer's
    arguments and submodules, plus ``cross_attn``, ``norm3``. ``forward(x [B, T, d],
    memory [B, S, d], self_mask=None, memory_mask=None, is_causal=False, cache=None)``: cross-attention's
    queries come from ``x``, its keys and values from ``memory``."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, **kwargs):  # kwargs: as the base's
        super().__init__(d_model, n_heads, d_ff, dropout, **kwargs)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.norm3 = nn.LayerNorm(d_model, eps=self.norm1.eps)
        self.dropout3 = nn.Dropout(dropout)

    def forward(self, x: Tensor, memory: Tensor, self_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                is_causal: bool = False, cache: LayerCache | None = None) -> Tensor:  # fmt: skip
        self_cache, cross_cache = (None, None) if cache is None else (cache.self_attn, cache.cross_attn)
        attend_self = lambda h: self.self_attn(h, h, h, self_mask, False, is_causal, self_cache)[0]
        attend_memory = lambda h: self.cross_attn(h, memory, memory, memory_mask, False, cache=cross_cache)[0]
        x = residual(x, attend_self, self.norm1, self.dropout1, self.norm_first)
        x = residual(x, attend_memory, self.norm2, self.dropout2, self.norm_first)
        return residual(x, self.ff, self.norm3, self.dropout3, self.norm_first)
