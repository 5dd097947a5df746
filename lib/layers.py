"""The Transformer's blocks: feed-forward, encoder layer, decoder layer.

Each sub-layer is wrapped in a residual connection and a LayerNorm, in one of two placements:

- post-LN (``norm_first=False``, the paper's): ``x = LayerNorm(x + Sublayer(x))``
- pre-LN (``norm_first=True``, Xiong et al., 2020): ``x = x + Sublayer(LayerNorm(x))``

With ReLU, ``batch_first=True`` and dropout off, they compute exactly what
``torch.nn.TransformerEncoderLayer`` / ``TransformerDecoderLayer`` compute.
"""
from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .attention import KVCache, MultiHeadAttention
from .positions import RelativePositionEmbedding, RotaryEmbedding

ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class FeedForward(nn.Module):
    r"""The position-wise feed-forward network, applied to every position alone.

    .. math::
        \mathrm{FFN}(x) = \max(0, x W_1 + b_1)\, W_2 + b_2

    ``[B, T, d_model] -> [B, T, d_model]`` through a hidden width ``d_ff``
    (``linear1``, the activation, dropout, ``linear2``).
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation={activation!r} is unknown; expected one of {sorted(ACTIVATIONS)}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATIONS[activation]
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with a residual connection and LayerNorm.

    ``forward(x [B, T, d], mask=None) -> [B, T, d]``; ``mask`` is bool, ``True`` = may attend,
    broadcasting to ``[B, H, T, T]`` (e.g. ``padding_mask(src, pad_id)``).
    With ``is_causal=True`` (and optionally a ``cache``) the same layer is a GPT block.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        activation: str = "relu",
        position: RotaryEmbedding | RelativePositionEmbedding | None = None,
        layer_norm_eps: float = 1e-5,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout, position=position)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.norm1 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.norm2 = nn.LayerNorm(d_model, eps=layer_norm_eps)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(
        self, x: Tensor, mask: Tensor | None = None, is_causal: bool = False, cache: KVCache | None = None
    ) -> Tensor:
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), mask, is_causal, cache)
            x = x + self.dropout2(self.ff(self.norm2(x)))
        else:
            x = self.norm1(x + self._self_attention(x, mask, is_causal, cache))
            x = self.norm2(x + self.dropout2(self.ff(x)))
        return x

    def _self_attention(self, x, mask, is_causal, cache):
        out, _ = self.self_attn(x, x, x, mask, need_weights=False, is_causal=is_causal, cache=cache)
        return self.dropout1(out)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder memory, then feed-forward.

    ``forward(x [B, T, d], memory [B, S, d], self_mask=None, memory_mask=None) -> [B, T, d]``.
    In cross-attention the queries come from the decoder and the keys and values from
    ``memory``.  Pass ``is_causal=True`` for the look-ahead mask (the models do).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        d_ff: int,
        dropout: float = 0.1,
        norm_first: bool = False,
        activation: str = "relu",
        position: RotaryEmbedding | RelativePositionEmbedding | None = None,
        layer_norm_eps: float = 1e-5,
    ):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout, position=position)
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
        self_cache: KVCache | None = None,
        cross_cache: KVCache | None = None,
    ) -> Tensor:
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), self_mask, is_causal, self_cache)
            x = x + self._cross_attention(self.norm2(x), memory, memory_mask, cross_cache)
            x = x + self.dropout3(self.ff(self.norm3(x)))
        else:
            x = self.norm1(x + self._self_attention(x, self_mask, is_causal, self_cache))
            x = self.norm2(x + self._cross_attention(x, memory, memory_mask, cross_cache))
            x = self.norm3(x + self.dropout3(self.ff(x)))
        return x

    def _self_attention(self, x, mask, is_causal, cache):
        out, _ = self.self_attn(x, x, x, mask, need_weights=False, is_causal=is_causal, cache=cache)
        return self.dropout1(out)

    def _cross_attention(self, x, memory, mask, cache):
        out, _ = self.cross_attn(x, memory, memory, mask, need_weights=False, cache=cache)
        return self.dropout2(out)
