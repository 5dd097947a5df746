"""A decoder-only (GPT-style) language model: a stack of causal self-attention blocks."""
from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .attention import KVCache
from .layers import EncoderLayer
from .positions import POSITIONS, RotaryEmbedding
from .transformer import absolute_position, attention_position, check_tokens, _positive_int


class DecoderOnlyLM(nn.Module):
    r"""Predicts the next token from the ones before it.

    .. math::
        p(w_t \mid w_{<t}) = \mathrm{softmax}(h_t E^\top), \qquad
        h = \mathrm{Blocks}(E[w] \sqrt{d} + P)

    Each block is an :class:`~lib.layers.EncoderLayer` run with the causal mask (self-attention
    plus feed-forward, no cross-attention).  ``forward(tokens [B, T]) -> logits [B, T, V]``.
    Defaults follow GPT-2: pre-LN blocks, learned positions, output tied to the embedding.
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 128,
        n_heads: int = 4,
        n_layers: int = 2,
        d_ff: int | None = None,
        dropout: float = 0.1,
        max_len: int = 512,
        norm_first: bool = True,
        position: str = "learned",
        tie_output: bool = True,
        pad_id: int = 0,
        activation: str = "gelu",
        max_relative_distance: int = 16,
    ):
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("n_heads", n_heads),
                            ("n_layers", n_layers), ("max_len", max_len)):
            _positive_int(name, value)
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if position not in POSITIONS:
            raise ValueError(f"position={position!r} is unknown; expected one of {list(POSITIONS)}")
        self.vocab_size, self.d_model, self.max_len, self.pad_id = vocab_size, d_model, max_len, pad_id
        d_head = d_model // n_heads
        self.embed = nn.Embedding(vocab_size, d_model)
        self.position = absolute_position(position, d_model, max_len)
        rotary = RotaryEmbedding(d_head) if position == "rotary" else None
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, n_heads, d_ff or 4 * d_model, dropout, norm_first, activation,
                         position=attention_position(position, d_head, rotary, max_relative_distance))
            for _ in range(n_layers)
        )
        self.norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.out_proj = nn.Linear(d_model, vocab_size, bias=False)
        for module in self.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                if module.bias is not None:
                    nn.init.zeros_(module.bias)
        nn.init.normal_(self.embed.weight, std=d_model ** -0.5)
        if tie_output:
            self.out_proj.weight = self.embed.weight

    def forward(self, tokens: Tensor, cache: list[KVCache] | None = None) -> Tensor:
        offset = 0 if cache is None else len(cache[0])
        check_tokens("tokens", tokens, self.vocab_size, self.max_len, offset)
        x = self.embed(tokens) * math.sqrt(self.d_model)
        if self.position is not None:
            x = self.position(x, offset)
        x = self.dropout(x)
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
        """Continue ``prompt [B, T]`` by ``max_new_tokens`` tokens; returns ``[B, T + new]``.

        ``temperature=0`` is greedy decoding; otherwise sample from ``softmax(logits / temperature)``,
        restricted to the ``top_k`` most likely tokens if given.  Rows that produced ``eos_id``
        are padded with ``pad_id`` afterwards.  See :func:`lib.decoding.beam_search` for beams.
        """
        from .decoding import generate_tokens

        return generate_tokens(self, prompt, max_new_tokens, temperature=temperature, top_k=top_k,
                               eos_id=eos_id, use_cache=use_cache)
