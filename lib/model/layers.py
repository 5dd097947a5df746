"""The Transformer's layers: feed-forward, encoder layer, decoder layer.

Each sub-layer is wrapped in a residual connection and a LayerNorm, in one of two placements
(:func:`residual`):

- post-LN (``norm_first=False``, the paper's): ``x = LayerNorm(x + Dropout(Sublayer(x)))``
- pre-LN (``norm_first=True``, Xiong et al., 2020): ``x = x + Dropout(Sublayer(LayerNorm(x)))``

With ReLU, ``batch_first=True`` and dropout off they compute exactly what
``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` compute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention
from .checks import check_choice, check_int, check_number

ACTIVATIONS = MappingProxyType({"relu": F.relu, "gelu": F.gelu})


def residual(
    x: Tensor, sublayer: Callable[[Tensor], Tensor], norm: nn.Module, dropout: nn.Module, norm_first: bool
) -> Tensor:
    """``x + Dropout(Sublayer(LN(x)))`` (pre-LN) or ``LN(x + Dropout(Sublayer(x)))`` (post-LN)."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class FeedForward(nn.Module):
    r"""The position-wise feed-forward network, applied to every position alone.

    .. math::
        \mathrm{FFN}(x) = \max(0, x W_1 + b_1)\, W_2 + b_2

    ``[B, T, d_model] -> [B, T, d_model]`` through a hidden width ``d_ff``
    (``linear1``, the activation, dropout, ``linear2``).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        check_int("d_ff", d_ff, minimum=1)
        check_choice("activation", activation, sorted(ACTIVATIONS))
        check_number("dropout", dropout, 0.0, 1.0, high_open=True)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATIONS[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


@dataclass
class LayerCache:
    """The key/value caches of one decoder layer: its self-attention's and its cross-attention's
    (static: computed from the encoder memory once)."""

    self_attn: KVCache = field(default_factory=KVCache)
    cross_attn: KVCache = field(default_factory=lambda: KVCache(static=True))

    def __len__(self) -> int:
        return len(self.self_attn)

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` of both caches (beam search)."""
        self.self_attn.reorder(index)
        self.cross_attn.reorder(index)


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with a residual connection and LayerNorm.

    ``EncoderLayer(d_model, n_heads, d_ff, dropout=0.1, norm_first=False, activation="relu",
    layer_norm_eps=1e-5, self_attn=None)``; ``self_attn`` defaults to a plain
    :class:`~lib.model.attention.MultiHeadAttention` (pass one with rotary or relative positions).
    Submodules ``self_attn``, ``ff``, ``norm1``, ``norm2``.
    ``forward(x [B, T, d], mask=None, is_causal=False, cache=None) -> [B, T, d]``; ``mask`` is bool,
    ``True`` = may attend, broadcasting to ``[B, H, T, T]`` (e.g. ``padding_mask(src, pad_id)``).
    With ``is_causal=True`` it is the block of a decoder-only LM (:class:`DecoderOnlyLayer`).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
        self_attn: MultiHeadAttention | None = None,
    ):
        super().__init__()
        check_number("layer_norm_eps", layer_norm_eps, 0.0, math.inf, low_open=True, high_open=True)
        self.self_attn = self_attn or MultiHeadAttention(d_model, n_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self, x: Tensor, mask: Tensor | None = None, is_causal: bool = False, cache: KVCache | None = None
    ) -> Tensor:
        def attend(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, mask, need_weights=False, is_causal=is_causal, cache=cache)[0]

        x = residual(x, attend, self.norm1, self.dropout1, self.norm_first)
        return residual(x, self.ff, self.norm2, self.dropout2, self.norm_first)


class DecoderOnlyLayer(EncoderLayer):
    """The block of a decoder-only (GPT) LM: an encoder layer whose self-attention is causal.

    ``forward(x [B, T, d], cache=None) -> [B, T, d]``.
    """

    def forward(self, x: Tensor, cache: KVCache | None = None) -> Tensor:  # type: ignore[override]
        return super().forward(x, is_causal=True, cache=cache)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder memory, then feed-forward.

    Arguments as :class:`EncoderLayer`. Submodules ``self_attn``, ``cross_attn``, ``ff``,
    ``norm1``, ``norm2``, ``norm3``.
    ``forward(x [B, T, d], memory [B, S, d], self_mask=None, memory_mask=None, is_causal=False,
    cache=None) -> [B, T, d]``. In cross-attention the queries come from the decoder, the keys and
    values from ``memory``. ``is_causal=True`` adds the look-ahead mask (to ``self_mask``, if given);
    a :class:`LayerCache` decodes incrementally.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        activation: str = "relu",
        layer_norm_eps: float = 1e-5,
        self_attn: MultiHeadAttention | None = None,
    ):
        super().__init__()
        check_number("layer_norm_eps", layer_norm_eps, 0.0, math.inf, low_open=True, high_open=True)
        self.self_attn = self_attn or MultiHeadAttention(d_model, n_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, dropout)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm3 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self,
        x: Tensor,
        memory: Tensor,
        self_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        is_causal: bool = False,
        cache: LayerCache | None = None,
    ) -> Tensor:
        self_cache, cross_cache = (None, None) if cache is None else (cache.self_attn, cache.cross_attn)

        def attend_self(h: Tensor) -> Tensor:
            return self.self_attn(h, h, h, self_mask, need_weights=False, is_causal=is_causal, cache=self_cache)[0]

        def attend_memory(h: Tensor) -> Tensor:
            return self.cross_attn(h, memory, memory, memory_mask, need_weights=False, cache=cross_cache)[0]

        x = residual(x, attend_self, self.norm1, self.dropout1, self.norm_first)
        x = residual(x, attend_memory, self.norm2, self.dropout2, self.norm_first)
        return residual(x, self.ff, self.norm3, self.dropout3, self.norm_first)
