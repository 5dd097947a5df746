"""The RNN baselines of the lecture: an LSTM encoder-decoder, with and without attention.

Without attention the decoder sees the source only through the encoder's final state, one
fixed-size vector (the *bottleneck*).  With attention every decoder state ``s_t`` looks back at
all encoder states ``h_1 … h_S`` (Bahdanau et al., 2015; Luong et al., 2015):

.. math::
    e_{t,i} = \\mathrm{score}(s_t, h_i), \\qquad \\alpha_t = \\mathrm{softmax}(e_t), \\qquad
    c_t = \\sum_i \\alpha_{t,i} h_i, \\qquad p(y_t) = \\mathrm{softmax}(W [s_t; c_t])
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .model.attention import scaled_dot_product_attention
from .model.checks import check_choice, check_int, check_tokens
from .model.generation import greedy_decode
from .model.masks import masked_softmax, padding_mask

RNN_ATTENTION = (None, "additive", "dot")


class AdditiveAttention(nn.Module):
    r"""Additive (Bahdanau) attention: a one-hidden-layer network scores each key.

    .. math::
        e_{t,i} = v^\top \tanh(W_q s_t + W_k h_i)

    ``forward(query [B, T, d_q], keys [B, S, d_k], values [B, S, d_v], mask=None)
    -> (context [B, T, d_v], weights [B, T, S])``; ``mask`` is bool, ``True`` = may attend,
    broadcasting to ``[B, T, S]``.
    """

    def __init__(self, d_query: int, d_key: int, d_attn: int | None = None):
        super().__init__()
        d_attn = d_attn or d_key
        self.w_q = nn.Linear(d_query, d_attn, bias=False)
        self.w_k = nn.Linear(d_key, d_attn, bias=True)
        self.v = nn.Linear(d_attn, 1, bias=False)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor, mask: Tensor | None = None):
        # [B, T, 1, d_attn] + [B, 1, S, d_attn] -> scores [B, T, S]
        scores = self.v(torch.tanh(self.w_q(query)[:, :, None] + self.w_k(keys)[:, None])).squeeze(-1)
        weights = masked_softmax(scores, mask)  # fully masked rows -> 0
        return weights @ values, weights


class Seq2SeqRNN(nn.Module):
    """LSTM encoder-decoder: ``forward(src [B, S], tgt_in [B, T]) -> logits [B, T, V_tgt]``.

    - ``attention=None``: the decoder starts from the encoder's final state and never sees the
      source again — all of it must pass through one ``d_hidden``-sized vector.
    - ``attention="additive"`` (Bahdanau) or ``"dot"`` (Luong, ``e = s_t · h_i``): every decoder
      state attends over all encoder states; the output layer sees ``[s_t; c_t]``.

    After a forward pass with attention, ``last_attention`` holds the weights ``[B, T, S]``.
    The decoder is teacher-forced and vectorised over time (no input feeding), so training is fast.
    """

    def __init__(
        self,
        vocab_size: int,
        d_hidden: int,
        attention: str | None = None,
        tgt_vocab_size: int | None = None,
        d_embed: int | None = None,
        pad_id: int = 0,
    ):
        super().__init__()
        check_choice("attention", attention, RNN_ATTENTION)
        check_int("vocab_size", vocab_size, minimum=1)
        check_int("d_hidden", d_hidden, minimum=1)
        tgt_vocab_size = tgt_vocab_size or vocab_size
        d_embed = d_embed or d_hidden
        self.attention_kind, self.pad_id = attention, pad_id
        self.src_vocab_size, self.tgt_vocab_size = vocab_size, tgt_vocab_size
        self.src_embed = nn.Embedding(vocab_size, d_embed, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_embed, padding_idx=pad_id)
        self.encoder = nn.LSTM(d_embed, d_hidden, batch_first=True)
        self.decoder = nn.LSTM(d_embed, d_hidden, batch_first=True)
        self.attention = AdditiveAttention(d_hidden, d_hidden) if attention == "additive" else None
        self.out_proj = nn.Linear(2 * d_hidden if attention else d_hidden, tgt_vocab_size)
        self.last_attention: Tensor | None = None

    def encode(self, src: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """States ``h [B, S, d]`` and each source's final ``(h_S, c_S)``.

        The padded batch is *packed*, so the LSTM never reads a ``<pad>``:
        each source's final state is the one after its own last token, and
        its states after that are zeros.
        """
        lengths = (src != self.pad_id).sum(dim=1).clamp(min=1).cpu()
        packed = pack_padded_sequence(self.src_embed(src), lengths, batch_first=True, enforce_sorted=False)
        states, final = self.encoder(packed)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=src.size(1))
        return states, final

    def decode(self, tgt_in: Tensor, states: Tensor, final: tuple[Tensor, Tensor], src: Tensor):
        """Logits ``[B, T, V]`` and the decoder's last state (to decode on).

        ``states``, ``final``: what :meth:`encode` returned for ``src``.
        """
        # s_t for every step of tgt_in at once (in training: the true y_{t-1})
        s, last = self.decoder(self.tgt_embed(tgt_in), final)  # [B, T, d]
        if self.attention_kind is None:
            return self.out_proj(s), last  # logits W_o s_t
        mask = padding_mask(src, self.pad_id)[:, 0]  # [B, 1, S]
        if self.attention_kind == "additive":
            context, weights = self.attention(s, states, states, mask)
        else:  # e_ti = s_t · h_i
            context, weights = scaled_dot_product_attention(s, states, states, mask, scale=1.0)
        self.last_attention = weights.detach()  # alpha [B, T, S]
        logits = self.out_proj(torch.cat([s, context], dim=-1))  # W_o[s_t;c_t]
        return logits, last

    def forward(self, src: Tensor, tgt_in: Tensor) -> Tensor:
        check_tokens("src", src, self.src_vocab_size)
        check_tokens("tgt_in", tgt_in, self.tgt_vocab_size)
        if tgt_in.size(0) != src.size(0):
            raise ValueError(f"src has batch size {src.size(0)} but tgt_in has {tgt_in.size(0)}; they must match")
        states, final = self.encode(src)
        return self.decode(tgt_in, states, final, src)[0]

    def generate(
        self, src: Tensor, max_new_tokens: int, bos_id: int = 1, eos_id: int | None = None, use_cache: bool = True
    ) -> Tensor:
        """Greedy decoding, one token at a time (:func:`lib.model.generation.greedy_decode`):
        ``[B, ≤ max_new_tokens]`` without ``<bos>``, padded after ``eos_id``."""
        return greedy_decode(self, src, max_new_tokens, bos_id=bos_id, eos_id=eos_id, use_cache=use_cache)

    # The stepping interface of lib.model.generation (shared with Transformer and DecoderOnlyLM).
    starts_from_bos = True
    max_positions = None  # no position table: any length

    @property
    def config(self) -> SimpleNamespace:
        """What generation reads of a model's configuration: ``pad_id``."""
        return SimpleNamespace(pad_id=self.pad_id)

    def new_cache(self) -> list[RNNState]:
        """The decoder's state after the tokens fed so far (one "layer")."""
        return [RNNState()]

    def generation_context(self, src: Tensor) -> tuple[Tensor, ...]:
        """The encoder states, the source, and the initial decoder state ``(h, c)``, batch first."""
        check_tokens("src", src, self.src_vocab_size)
        states, (h, c) = self.encode(src)
        return states, src, h.transpose(0, 1), c.transpose(0, 1)

    def next_logits(self, tokens: Tensor, context: tuple[Tensor, ...], cache: list[RNNState] | None) -> Tensor:
        """Logits ``[B, V]`` of the token after ``tokens`` (only the new ones, with a cache)."""
        states, src, h, c = context
        state = (h.transpose(0, 1).contiguous(), c.transpose(0, 1).contiguous())
        if cache is not None and cache[0].h is not None:
            state = (cache[0].h, cache[0].c)
        logits, (h, c) = self.decode(tokens, states, state, src)
        if cache is not None:
            cache[0].h, cache[0].c = h, c
        return logits[:, -1]


@dataclass
class RNNState:
    """The LSTM decoder's state ``(h, c)``, each ``[1, B, d]``: the recurrent model's "cache"."""

    h: Tensor | None = None
    c: Tensor | None = None

    def reorder(self, index: Tensor) -> None:
        """Keep batch rows ``index`` (beam search)."""
        if self.h is not None:
            self.h, self.c = self.h[:, index], self.c[:, index]
