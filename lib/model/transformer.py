"""The encoder-decoder Transformer (Vaswani et al., 2017), its configuration, and the plumbing it
shares with :class:`~lib.model.lm.DecoderOnlyLM` (validation, weight initialisation, embedding path)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from torch import Tensor, nn

from .checks import check_choice, check_int, check_number, check_tokens
from .layers import ACTIVATIONS, DecoderLayer, EncoderLayer, LayerCache
from .masks import padding_mask
from .positions import (
    POSITIONS,
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)


def validate_model_config(config, vocab_sizes: dict[str, int]) -> None:
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
    d_head = config.d_model // config.n_heads
    if config.position == "rotary" and d_head % 2:
        raise ValueError(f"position='rotary' needs an even d_head, got d_model/n_heads={d_head}")
    check_int("pad_id", config.pad_id)
    if not 0 <= config.pad_id < min(vocab_sizes.values()):
        raise ValueError(f"pad_id={config.pad_id} must be a valid token id in the vocabulary")


@dataclass
class TransformerConfig:
    """Hyper-parameters of :class:`Transformer` (defaults: the paper's base model).

    ``position`` is one of ``"sinusoidal"``, ``"learned"``, ``"relative"``, ``"rotary"``, ``"none"``;
    ``max_len`` is the positional capacity, a limit only for ``"learned"`` positions.
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
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        check_int("d_ff", self.d_ff, minimum=1)
        validate_model_config(self, {"src_vocab_size": self.src_vocab_size, "tgt_vocab_size": self.tgt_vocab_size})
        check_int("n_encoder_layers", self.n_encoder_layers, minimum=0)
        check_int("n_decoder_layers", self.n_decoder_layers, minimum=0)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            raise ValueError(
                f"share_embeddings=True needs src_vocab_size == tgt_vocab_size, "
                f"got {self.src_vocab_size} and {self.tgt_vocab_size}"
            )

    @classmethod
    def base(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> TransformerConfig:
        """The paper's base model (Table 3): d=512, h=8, N=6, d_ff=2048, dropout 0.1, shared and tied embeddings."""
        tgt_vocab_size = src_vocab_size if tgt_vocab_size is None else tgt_vocab_size
        shared = src_vocab_size == tgt_vocab_size
        config = cls(src_vocab_size, tgt_vocab_size, share_embeddings=shared, tie_output=True)
        return replace(config, **overrides)

    @classmethod
    def big(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> TransformerConfig:
        """The paper's big model (Table 3): d=1024, h=16, N=6, d_ff=4096, dropout 0.3."""
        config = cls.base(src_vocab_size, tgt_vocab_size, d_model=1024, n_heads=16, d_ff=4096, dropout=0.3)
        return replace(config, **overrides)


def attention_position(
    position: str, d_head: int, rotary: RotaryEmbedding | None, max_distance: int
) -> RotaryEmbedding | RelativePositionEmbedding | None:
    """What a self-attention layer gets: the shared RoPE, its own Shaw et al. tables, or nothing."""
    if position == "rotary":
        return rotary
    if position == "relative":
        return RelativePositionEmbedding(d_head, max_distance)
    return None


class TokenModel(nn.Module):
    """The plumbing :class:`Transformer` and :class:`~lib.model.lm.DecoderOnlyLM` share.

    Subclasses call :meth:`build_positions` (absolute positions, dropout, and the per-layer position
    modules) and, once every layer exists, :meth:`init_weights`; they embed with :meth:`embed_tokens`.
    """

    config: TransformerConfig
    position: nn.Module | None
    dropout: nn.Dropout

    def build_positions(self, config) -> None:
        """Set ``self.position`` (sinusoidal/learned, else ``None``), ``self.dropout`` and ``self.rotary``."""
        if config.position == "sinusoidal":
            self.position = SinusoidalPositionalEncoding(config.d_model, config.max_len)
        elif config.position == "learned":
            self.position = LearnedPositionalEmbedding(config.max_len, config.d_model)
        else:
            self.position = None
        d_head = config.d_model // config.n_heads
        self._rotary = RotaryEmbedding(d_head) if config.position == "rotary" else None
        self.dropout = nn.Dropout(config.dropout)

    def layer_position(self) -> RotaryEmbedding | RelativePositionEmbedding | None:
        """The position module for one more self-attention layer (shared RoPE, or its own Shaw tables)."""
        c = self.config
        return attention_position(c.position, c.d_model // c.n_heads, self._rotary, c.max_relative_distance)

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

    def check_tokens(self, name: str, tokens: Tensor, vocab_size: int, offset: int = 0) -> None:
        """Valid ids; the length is limited only by learned positions (``max_len``)."""
        learned = self.config.position == "learned"
        check_tokens(name, tokens, vocab_size, self.config.max_len if learned else None, offset)

    def num_parameters(self) -> int:
        """Number of distinct trainable parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


class Transformer(TokenModel):
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
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.build_positions(c)
        layer_args = (c.d_model, c.n_heads, c.d_ff, c.dropout, c.norm_first, c.activation)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(*layer_args, position=self.layer_position(), layer_norm_eps=c.layer_norm_eps)
            for _ in range(c.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(*layer_args, position=self.layer_position(), layer_norm_eps=c.layer_norm_eps)
            for _ in range(c.n_decoder_layers)
        )
        # Pre-LN stacks end in a LayerNorm; post-LN stacks already end in one.
        self.encoder_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self.init_weights([self.src_embed, self.tgt_embed])
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        self.check_tokens("src", src, self.config.src_vocab_size)
        return self._encode(src, src_mask)

    def decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        cache: list[LayerCache] | None = None,
    ) -> Tensor:
        """Decoder logits for ``tgt``.  With a ``cache`` (from :meth:`new_cache`), ``tgt``
        holds only the new tokens and earlier keys/values are reused."""
        offset = 0 if cache is None else len(cache[0])
        self.check_tokens("tgt", tgt, self.config.tgt_vocab_size, offset)
        return self._decode(tgt, memory, tgt_mask, memory_mask, cache)

    def forward(
        self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None
    ) -> Tensor:
        self.check_tokens("src", src, self.config.src_vocab_size)
        self.check_tokens("tgt", tgt, self.config.tgt_vocab_size)
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        memory = self._encode(src, src_mask)
        return self._decode(tgt, memory, tgt_mask, src_mask)

    def _encode(self, src: Tensor, src_mask: Tensor | None) -> Tensor:
        """:meth:`encode` for checked ``src``."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        x = self.embed_tokens(src, self.src_embed)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        return self.encoder_norm(x)

    def _decode(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None,
        memory_mask: Tensor | None,
        cache: list[LayerCache] | None = None,
    ) -> Tensor:
        """:meth:`decode` for checked ``tgt`` (the decoding loops call this at every step)."""
        offset = 0 if cache is None else len(cache[0])
        x = self.embed_tokens(tgt, self.tgt_embed, offset)
        for i, layer in enumerate(self.decoder_layers):
            x = layer(
                x, memory, tgt_mask, memory_mask, is_causal=tgt_mask is None, cache=None if cache is None else cache[i]
            )
        return self.out_proj(self.decoder_norm(x))

    def new_cache(self) -> list[LayerCache]:
        """An empty key/value cache: one :class:`~lib.model.layers.LayerCache` per decoder layer."""
        return [LayerCache() for _ in self.decoder_layers]
