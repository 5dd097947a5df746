"""A decoder-only (GPT-style) language model: a stack of causal self-attention blocks."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .attention import KVCache
from .checks import check_int
from .layers import EncoderLayer
from .transformer import TokenModel, validate_model_config


@dataclass
class LMConfig:
    """Hyper-parameters of :class:`DecoderOnlyLM` (defaults follow GPT-2's choices, at toy size).

    ``d_ff=None`` means ``4 * d_model``.  ``max_len`` is the positional capacity (a limit only for
    ``position="learned"``); the other fields mean what they mean in
    :class:`~lib.model.transformer.TransformerConfig`.
    """

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
        validate_model_config(self, {"vocab_size": self.vocab_size})
        check_int("n_layers", self.n_layers, minimum=1)


class DecoderOnlyLM(TokenModel):
    r"""Predicts the next token from the ones before it.

    .. math::
        p(w_t \mid w_{<t}) = \mathrm{softmax}(h_t E^\top), \qquad
        h = \mathrm{Blocks}(E[w] \sqrt{d} + P)

    Each block is an :class:`~lib.model.layers.EncoderLayer` run with the causal mask (self-attention
    plus feed-forward, no cross-attention).  ``forward(tokens [B, T]) -> logits [B, T, V]``.
    Build it from an :class:`LMConfig`: ``DecoderOnlyLM(LMConfig(vocab_size=20, d_model=32))``.
    """

    def __init__(self, config: LMConfig):
        super().__init__()
        if not isinstance(config, LMConfig):
            raise TypeError(
                f"config must be an LMConfig, got {type(config).__name__}; "
                f"build one with LMConfig(vocab_size=..., d_model=..., ...)"
            )
        self.config = c = config
        self.embed = nn.Embedding(c.vocab_size, c.d_model)
        self.build_positions(c)
        self.layers = nn.ModuleList(
            EncoderLayer(
                c.d_model,
                c.n_heads,
                c.d_ff or 4 * c.d_model,
                c.dropout,
                c.norm_first,
                c.activation,
                position=self.layer_position(),
                layer_norm_eps=c.layer_norm_eps,
            )
            for _ in range(c.n_layers)
        )
        self.norm = nn.LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.norm_first else nn.Identity()
        self.out_proj = nn.Linear(c.d_model, c.vocab_size, bias=False)
        self.init_weights([self.embed])
        if c.tie_output:
            self.out_proj.weight = self.embed.weight

    def forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        offset = 0 if cache is None else len(cache[0])
        self.check_tokens("tokens", tokens, self.config.vocab_size, offset)
        return self._forward(tokens, cache)

    def _forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        """:meth:`forward` for checked ``tokens`` (the decoding loops call this at every step)."""
        offset = 0 if cache is None else len(cache[0])
        x = self.embed_tokens(tokens, self.embed, offset)
        for i, layer in enumerate(self.layers):
            x = layer(x, is_causal=True, cache=None if cache is None else cache[i])
        return self.out_proj(self.norm(x))

    def new_cache(self) -> list[KVCache]:
        """An empty key/value cache, one per block."""
        return [KVCache() for _ in self.layers]

    @torch.no_grad()
    def generate(
        self,
        prompt: Tensor,
        max_new_tokens: int,
        temperature: float = 0.0,
        top_k: int | None = None,
        eos_id: int | None = None,
        use_cache: bool = True,
    ) -> Tensor:
        """Continue ``prompt [B, T]`` by at most ``max_new_tokens`` tokens; returns ``[B, T + new]``.

        ``temperature=0`` is greedy decoding; otherwise sample from ``softmax(logits / temperature)``,
        restricted to the ``top_k`` most likely tokens if given.  Rows that produced ``eos_id``
        are padded with ``pad_id`` afterwards.  See :func:`lib.model.generation.beam_search` for beams.
        """
        from .generation import generate_tokens

        return generate_tokens(
            self, prompt, max_new_tokens, temperature=temperature, top_k=top_k, eos_id=eos_id, use_cache=use_cache
        )
