"""The encoder-decoder Transformer (Vaswani et al., 2017) and its configuration."""

from __future__ import annotations

from dataclasses import dataclass, replace

from torch import Tensor, nn
from torch.compiler import is_compiling

from .checks import check_int
from .embedding import TokenModel, check_config
from .layers import DecoderLayer, EncoderLayer, LayerCache
from .masks import is_causal_mask, padding_mask


@dataclass
class TransformerConfig:
    """Hyper-parameters of :class:`Transformer` (defaults: the paper's base model). ``position``: one of
    :data:`~lib.model.positions.POSITIONS`; ``max_len`` limits only learned positions; ``share_embeddings``:
    one embedding for source and target; ``tie_output``: it is also the output projection (§3.4)."""

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
        check_config(self, {"src_vocab_size": self.src_vocab_size, "tgt_vocab_size": self.tgt_vocab_size})
        check_int("n_encoder_layers", self.n_encoder_layers, minimum=0)
        check_int("n_decoder_layers", self.n_decoder_layers, minimum=0)
        if self.share_embeddings and self.src_vocab_size != self.tgt_vocab_size:
            sizes = f"{self.src_vocab_size} and {self.tgt_vocab_size}"
            raise ValueError(f"share_embeddings=True needs src_vocab_size == tgt_vocab_size, got {sizes}")

    @classmethod
    def base(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> TransformerConfig:
        """The paper's base model (Table 3): d=512, h=8, N=6, d_ff=2048, dropout 0.1, shared and tied embeddings."""
        tgt_vocab_size = src_vocab_size if tgt_vocab_size is None else tgt_vocab_size
        shared = src_vocab_size == tgt_vocab_size
        return replace(cls(src_vocab_size, tgt_vocab_size, share_embeddings=shared, tie_output=True), **overrides)

    @classmethod
    def big(cls, src_vocab_size: int = 37000, tgt_vocab_size: int | None = None, **overrides) -> TransformerConfig:
        """The paper's big model (Table 3): d=1024, h=16, N=6, d_ff=4096, dropout 0.3."""
        config = cls.base(src_vocab_size, tgt_vocab_size, d_model=1024, n_heads=16, d_ff=4096, dropout=0.3)
        return replace(config, **overrides)


class Transformer(TokenModel):
    """The encoder-decoder: ``forward(src [B, S], tgt [B, T], src_mask=None, tgt_mask=None) -> [B, T, V_tgt]``.

    ``src_mask`` defaults to ``src``'s padding mask. The decoder's self-attention always has the look-ahead
    mask; a ``tgt_mask`` (e.g. ``padding_mask(tgt, pad_id)``) restricts it further (``nn.Transformer``'s replaces it).
    """

    starts_from_bos = True  # generation starts from <bos>, which the result leaves out

    def __init__(self, config: TransformerConfig):
        super().__init__()
        if not isinstance(config, TransformerConfig):
            raise TypeError(f"config must be a TransformerConfig, got {type(config).__name__}")
        self.config = c = config
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = self.src_embed if c.share_embeddings else nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.build_positions(c)
        args = (c.d_model, c.n_heads, c.d_ff, c.dropout)
        kwargs = dict(norm_first=c.norm_first, activation=c.activation, layer_norm_eps=c.layer_norm_eps)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(*args, **kwargs, self_attn=self.self_attention()) for _ in range(c.n_encoder_layers)
        )
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(*args, **kwargs, self_attn=self.self_attention()) for _ in range(c.n_decoder_layers)
        )
        self.encoder_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.tgt_vocab_size, bias=False)
        self.init_weights([self.src_embed, self.tgt_embed])
        if c.tie_output:
            self.out_proj.weight = self.tgt_embed.weight

    def encode(self, src: Tensor, src_mask: Tensor | None = None) -> Tensor:
        """The encoder stack: ``src [B, S] -> memory [B, S, d]``."""
        self.check_tokens("src", src, self.config.src_vocab_size, values=False)  # shape only: no sync
        mask = padding_mask(src, self.config.pad_id) if src_mask is None else src_mask
        x = self.embed_tokens(src, self.src_embed)
        for layer in self.encoder_layers:
            x = layer(x, mask)
        return self.encoder_norm(x)

    def decode(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
               cache: list[LayerCache] | None = None) -> Tensor:  # fmt: skip
        """The decoder stack and output layer: ``tgt [B, T] -> logits [B, T, V_tgt]``. With a ``cache``
        (:meth:`new_cache`), ``tgt`` holds only the new tokens."""
        offset = len(cache[0]) if cache else 0
        self.check_tokens("tgt", tgt, self.config.tgt_vocab_size, offset, values=False)
        if tgt_mask is not None and tgt_mask.device.type == "cpu" and not is_compiling() and is_causal_mask(tgt_mask):
            tgt_mask = None  # the look-ahead mask is always there: skip it (on the CPU: comparing costs no sync)
        x = self.embed_tokens(tgt, self.tgt_embed, offset)
        for i, layer in enumerate(self.decoder_layers):
            x = layer(x, memory, tgt_mask, memory_mask, is_causal=True, cache=cache[i] if cache else None)
        return self.out_proj(self.decoder_norm(x))

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None):
        memory = self.encode(src, src_mask)  # (checks src)
        src_mask = padding_mask(src, self.config.pad_id) if src_mask is None else src_mask
        return self.decode(tgt, memory, tgt_mask, src_mask)

    # The stepping interface of lib.model.generation (its Decoder protocol).
    def new_cache(self) -> list[LayerCache] | None:
        return [LayerCache() for _ in self.decoder_layers] or None

    def generation_context(self, src: Tensor) -> tuple[Tensor, Tensor]:
        self.check_tokens("src", src, self.config.src_vocab_size)
        return self.encode(src), padding_mask(src, self.config.pad_id)

    def next_logits(self, tokens: Tensor, context: tuple[Tensor, Tensor], cache: list[LayerCache] | None) -> Tensor:
        return self.decode(tokens, context[0], None, context[1], cache)[:, -1]
