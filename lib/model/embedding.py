"""What both models share: configuration checks, position modules, token embeddings, initialisation."""

from __future__ import annotations

import math

from torch import Tensor, nn

from .attention import MultiHeadAttention, RelativeMultiHeadAttention
from .checks import check_choice, check_int, check_number, check_tokens
from .layers import ACTIVATIONS
from .positions import POSITIONS, LearnedPositionalEmbedding, RotaryEmbedding, SinusoidalPositionalEncoding


def check_config(config, vocab_sizes: dict[str, int]) -> None:
    """The checks every model configuration shares (``TransformerConfig`` and ``LMConfig``)."""
    for name, value in vocab_sizes.items():
        check_int(name, value, minimum=1)
    for name in ("d_model", "n_heads", "max_len", "max_relative_distance"):
        check_int(name, getattr(config, name), minimum=1)
    if config.d_ff is not None:
        check_int("d_ff", config.d_ff, minimum=1)
    if config.d_model % config.n_heads:
        raise ValueError(f"d_model={config.d_model} is not divisible by n_heads={config.n_heads}")
    check_number("dropout", config.dropout, 0.0, 1.0, high_open=True)
    check_number("layer_norm_eps", config.layer_norm_eps, 0.0, math.inf, low_open=True, high_open=True)
    check_choice("position", config.position, POSITIONS)
    check_choice("activation", config.activation, sorted(ACTIVATIONS))
    if config.position == "rotary" and (d_head := config.d_model // config.n_heads) % 2:
        raise ValueError(f"position='rotary' needs an even d_head, got d_model/n_heads={d_head}")
    check_int("pad_id", config.pad_id)
    if not 0 <= config.pad_id < min(vocab_sizes.values()):
        raise ValueError(f"pad_id={config.pad_id} must be a valid token id in the vocabulary")


class TokenModel(nn.Module):
    """What :class:`~lib.model.transformer.Transformer` and :class:`~lib.model.lm.DecoderOnlyLM` share:
    positions (:meth:`build_positions`, :meth:`self_attention`), :meth:`init_weights`, :meth:`embed_tokens`."""

    def build_positions(self, config) -> None:
        """``self.position`` (sinusoidal, learned or ``None``), ``self.rotary``, ``self.dropout``, ``self.max_positions``."""
        self.max_positions = config.max_len if config.position == "learned" else None
        if config.position == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        elif config.position == "learned":
            self.position = LearnedPositionalEmbedding(config.max_len, config.d_model)
        else:
            self.position = None
        self.rotary = RotaryEmbedding(config.d_model // config.n_heads) if config.position == "rotary" else None
        self.dropout = nn.Dropout(config.dropout)

    def self_attention(self) -> MultiHeadAttention:
        """A new self-attention layer: relative (its own Shaw et al. tables), rotary, or plain."""
        c = self.config
        if c.position == "relative":
            return RelativeMultiHeadAttention(c.d_model, c.n_heads, c.max_relative_distance, dropout=c.dropout)
        return MultiHeadAttention(c.d_model, c.n_heads, c.dropout, rotary=self.rotary)

    def init_weights(self, embeddings: list[nn.Embedding]) -> None:
        """Xavier-uniform linear layers; embeddings N(0, 1/d_model), so that √d_model · E has unit scale."""
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        for embedding in embeddings:
            nn.init.normal_(embedding.weight, std=self.config.d_model**-0.5)

    def embed_tokens(self, tokens: Tensor, table: nn.Embedding, offset: int = 0) -> Tensor:
        r"""``Dropout(E[tokens] · √d_model + P[offset : offset + T])``, ``[B, T] -> [B, T, d_model]`` (§3.4)."""
        x = table(tokens) * math.sqrt(self.config.d_model)
        if self.position is not None:
            x = self.position(x, offset)
        return self.dropout(x)

    def check_tokens(self, name: str, tokens: Tensor, vocab_size: int, offset: int = 0, values: bool = True) -> None:
        """Valid ids (``values``: in the vocabulary); the length is limited only by learned positions (``max_len``)."""
        check_tokens(name, tokens, vocab_size, self.max_positions, offset, values)

    def num_parameters(self) -> int:
        """Number of distinct trainable parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
