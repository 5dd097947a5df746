"""A decoder-only (GPT-style) language model: a stack of causal self-attention blocks."""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from .attention import KVCache
from .checks import check_int
from .embedding import TokenModel, check_config
from .layers import DecoderOnlyLayer


@dataclass
class LMConfig:
    """Hyper-parameters of :class:`DecoderOnlyLM` (GPT-2's choices, at toy size). ``d_ff=None`` means
    ``4 * d_model``; the other fields mean what they mean in :class:`~lib.model.transformer.TransformerConfig`."""

    vocab_size: int
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int | None = None
    dropout: float = 0.1
    max_len: int = 512
    norm_first: bool = True
    position: str = "learned"
    tie_output: bool = True
    pad_id: int = 0
    activation: str = "gelu"
    max_relative_distance: int = 16
    layer_norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        check_config(self, {"vocab_size": self.vocab_size})
        check_int("n_layers", self.n_layers, minimum=1)


class DecoderOnlyLM(TokenModel):
    r"""Predicts the next token from the ones before it: ``forward(tokens [B, T], cache=None) -> [B, T, V]``.

    .. math::
        p(w_t \mid w_{<t}) = \mathrm{softmax}(h_t E^\top), \qquad h = \mathrm{Blocks}(E[w] \sqrt{d} + P)
    """

    starts_from_bos = False  # generation starts from the prompt, which stays in the result

    def __init__(self, config: LMConfig):
        super().__init__()
        if not isinstance(config, LMConfig):
            raise TypeError(f"config must be an LMConfig(vocab_size=...), got {type(config).__name__}")
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.build_positions(c)
        args = (c.d_model, c.n_heads, c.d_ff or 4 * c.d_model, c.dropout, c.norm_first, c.activation, c.layer_norm_eps)
        self.layers = nn.ModuleList(DecoderOnlyLayer(*args, self_attn=self.self_attention()) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.init_weights([self.embed])
        if c.tie_output:
            self.out_proj.weight = self.embed.weight

    def forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        offset = len(cache[0]) if cache else 0  # with a cache, ``tokens`` are only the new ones
        self.check_tokens("tokens", tokens, self.config.vocab_size, offset, values=False)  # shape only: no sync
        x = self.embed_tokens(tokens, self.embed, offset)
        for i, layer in enumerate(self.layers):
            x = layer(x, cache=cache[i] if cache else None)
        return self.out_proj(self.norm(x))

    def generate(self, prompt: Tensor, max_new_tokens: int, temperature: float = 0.0, top_k: int | None = None,
                 eos_id: int | None = None, use_cache: bool = True) -> Tensor:  # fmt: skip
        """Continue ``prompt [B, T]``: ``[B, T + new]``, by :func:`~lib.model.generation.generate_tokens` (no crop)."""
        from .generation import generate_tokens

        return generate_tokens(self, prompt, max_new_tokens, temperature, top_k, eos_id=eos_id, use_cache=use_cache)

    # The stepping interface of lib.model.generation (its Decoder protocol).
    def new_cache(self) -> list[KVCache]:
        return [KVCache() for _ in self.layers]

    def generation_context(self, prompt: Tensor) -> tuple[()]:
        self.check_tokens("prompt", prompt, self.config.vocab_size)
        return ()

    def next_logits(self, tokens: Tensor, context: tuple[()], cache: list[KVCache] | None) -> Tensor:
        return self(tokens, cache)[:, -1]
