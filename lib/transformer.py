"""The encoder-decoder Transformer (Vaswani et al., 2017) and its configuration."""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn

from .attention import KVCache
from .layers import ACTIVATIONS, DecoderLayer, EncoderLayer
from .masks import padding_mask
from .positions import (
    POSITIONS,
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)


def _positive_int(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name}={value!r} must be a positive int")


@dataclass
class TransformerConfig:
    """Hyper-parameters of :class:`Transformer` (defaults: the paper's base model).

    ``position`` is one of ``"sinusoidal"``, ``"learned"``, ``"relative"``, ``"rotary"``, ``"none"``.
    ``share_embeddings`` uses one embedding for source and target (equal vocabularies);
    ``tie_output`` reuses the target embedding as the output projection (paper §3.4).
    """

    src_vocab_size: int
    tgt_vocab_size: int
    d_model: int = 512
    n_heads: int = 8
    n_encoder_layers: int = 6
    n_decoder_layers: int = 6
    d_ff: int = 2048
    dropout: float = 0.1
    max_len: int = 5000
    norm_first: bool = False
    position: str = "sinusoidal"
    share_embeddings: bool = False
    tie_output: bool = False
    pad_id: int = 0
    activation: str = "relu"
    max_relative_distance: int = 16

    def __post_init__(self) -> None:
        for name in ("src_vocab_size", "tgt_vocab_size", "d_model", "n_heads", "d_ff", "max_len",
                     "max_relative_distance"):
            _positive_int(name, getattr(self, name))
        for name in ("n_encoder_layers", "n_decoder_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name}={value!r} must be a non-negative int")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_heads={self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout={self.dropout!r} must be in [0, 1)")
        if self.position not in POSITIONS:
            raise ValueError(f"position={self.position!r} is unknown; expected one of {list(POSITIONS)}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation={self.activation!r} is unknown; expected one of {sorted(ACTIVATIONS)}")
        if self.position == "rotary" and (self.d_model // self.n_heads) % 2:
            raise ValueError(f"position='rotary' needs an even d_head, got d_model/n_heads={self.d_model // self.n_heads}")
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings=True needs src_vocab_size == tgt_vocab_size, "
                f"got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )
        if not 0 <= self.pad_id < min(self.src_vocab_size, self.tgt_vocab_size):
            raise ValueError(f"pad_id={self.pad_id} must be a valid token id in both vocabularies")

    @classmethod
    def base(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> "TransformerConfig":
        """The paper's base model (Table 3): d=512, h=8, N=6, d_ff=2048, dropout 0.1, shared and tied embeddings."""
        tgt_vocab_size = src_vocab_size if tgt_vocab_size is None else tgt_vocab_size
        shared = src_vocab_size == tgt_vocab_size
        config = cls(src_vocab_size, tgt_vocab_size, share_embeddings=shared, tie_output=True)
        return replace(config, **overrides)

    @classmethod
    def big(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> "TransformerConfig":
        """The paper's big model (Table 3): d=1024, h=16, N=6, d_ff=4096, dropout 0.3."""
        config = cls.base(src_vocab_size, tgt_vocab_size, d_model=1024, n_heads=16, d_ff=4096, dropout=0.3)
        return replace(config, **overrides)


def attention_position(position: str, d_head: int, rotary: RotaryEmbedding | None,
                       max_distance: int) -> RotaryEmbedding | RelativePositionEmbedding | None:
    """What a self-attention layer gets: the shared RoPE, its own Shaw et al. tables, or nothing."""
    if position == "rotary":
        return rotary
    if position == "relative":
        return RelativePositionEmbedding(d_head, max_distance)
    return None


def absolute_position(position: str, d_model: int, max_len: int) -> nn.Module | None:
    """The module added to the embeddings for ``"sinusoidal"`` / ``"learned"``, else ``None``."""
    if position == "sinusoidal":
        return SinusoidalPositionalEncoding(d_model, max_len)
    if position == "learned":
        return LearnedPositionalEmbedding(max_len, d_model)
    return None


def check_tokens(name: str, tokens: Tensor, vocab_size: int, max_len: int, offset: int = 0) -> None:
    """Raise a clear error for token ids that are not ``[B, T]`` ints in ``[0, vocab_size)``."""
    if not isinstance(tokens, Tensor):
        raise TypeError(f"{name} must be a Tensor of token ids, got {type(tokens).__name__}")
    if tokens.dtype.is_floating_point or tokens.dtype.is_complex or tokens.dtype == torch.bool:
        raise TypeError(f"{name} must hold integer token ids, got dtype {tokens.dtype}")
    if tokens.dim() != 2 or tokens.size(1) == 0:
        raise ValueError(f"{name} of shape {tuple(tokens.shape)} should be [B, T] with T >= 1")
    if offset + tokens.size(1) > max_len:
        raise ValueError(f"{name} of length {offset + tokens.size(1)} is longer than max_len={max_len}")
    low, high = int(tokens.min()), int(tokens.max())
    if low < 0 or high >= vocab_size:
        raise ValueError(f"{name} holds token ids in [{low}, {high}], outside the vocabulary [0, {vocab_size})")


class Transformer(nn.Module):
    """The encoder-decoder Transformer.

    - ``encode(src [B, S], src_mask=None) -> memory [B, S, d]``
    - ``decode(tgt [B, T], memory, tgt_mask=None, memory_mask=None) -> logits [B, T, V_tgt]``
    - ``forward(src, tgt, src_mask=None, tgt_mask=None) -> logits [B, T, V_tgt]``

    Masks are bool, ``True`` = may attend.  ``src_mask`` defaults to the padding mask of
    ``src`` (keys equal to ``pad_id`` are ignored); ``tgt_mask`` defaults to the causal mask.
    Embeddings are multiplied by ``√d_model`` (§3.4).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        self.config = c = config
        d_head = c.d_model // c.n_heads
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.position = absolute_position(c.position, c.d_model, c.max_len)
        rotary = RotaryEmbedding(d_head) if c.position == "rotary" else None
        self.dropout = nn.Dropout(c.dropout)
        layer_args = (c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first, c.activation)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(*layer_args, position=attention_position(c.position, d_head, rotary, c.max_relative_distance))
            for _ in range(c.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(*layer_args, position=attention_position(c.position, d_head, rotary, c.max_relative_distance))
            for _ in range(c.n_decoder_layers)
        )
        # Pre-LN stacks end in a LayerNorm; post-LN stacks already end in one.
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self._init_weights()
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight

    def _init_weights(self) -> None:
        """Xavier-uniform linear layers; embeddings N(0, 1/d_model), so that √d_model · E has unit scale."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        for embedding in (self.src_embed, self.tgt_embed):
            nn.init.normal_(embedding.weight, std=self.config.d_model ** -0.5)

    def embed(self, tokens: Tensor, embedding: nn.Embedding, offset: int = 0) -> Tensor:
        """Token embedding × √d_model, plus absolute positions (if any), then dropout."""
        x = embedding(tokens) * math.sqrt(self.config.d_model)
        if self.position is not None:
            x = self.position(x, offset)
        return self.dropout(x)

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        c = self.config
        check_tokens("src", src, c.src_vocab_size, c.max_len)
        if src_mask is None:
            src_mask = padding_mask(src, c.pad_id)
        x = self.embed(src, self.src_embed)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        return self.encoder_norm(x)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        cache: list[KVCache] | None = None,
    ) -> Tensor:
        """Decoder logits for ``tgt``.  With a ``cache`` (from :meth:`new_cache`), ``tgt``
        holds only the new tokens and earlier keys/values are reused."""
        c = self.config
        offset = 0 if cache is None else len(cache[0])
        check_tokens("tgt", tgt, c.tgt_vocab_size, c.max_len, offset)
        x = self.embed(tgt, self.tgt_embed, offset)
        for i, layer in enumerate(self.decoder_layers):
            self_cache, cross_cache = (None, None) if cache is None else cache[2 * i : 2 * i + 2]
            x = layer(x, memory, tgt_mask, memory_mask, is_causal=tgt_mask is None,
                      self_cache=self_cache, cross_cache=cross_cache)
        return self.out_proj(self.decoder_norm(x))

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None,
                tgt_mask: Tensor | None = None) -> Tensor:
        if src_mask is None:
            check_tokens("src", src, self.config.src_vocab_size, self.config.max_len)
            src_mask = padding_mask(src, self.config.pad_id)
        memory = self.encode(src, src_mask)
        return self.decode(tgt, memory, tgt_mask, src_mask)

    def new_cache(self) -> list[KVCache]:
        """An empty key/value cache: ``[self_0, cross_0, self_1, cross_1, ...]``."""
        cache = []
        for _ in self.decoder_layers:
            cache += [KVCache(), KVCache(static=True)]
        return cache

    def num_parameters(self) -> int:
        """Number of distinct trainable parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
