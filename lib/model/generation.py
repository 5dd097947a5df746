"""Decoding: greedy search, sampling and beam search, with or without a key/value cache.

Works for both models:

- :class:`~lib.model.transformer.Transformer`: ``src [B, S]`` is encoded once and decoding starts
  from ``<bos>``; the result is the generated target without ``<bos>``.
- :class:`~lib.model.lm.DecoderOnlyLM`: ``src`` is the prompt; the result is the prompt plus its
  continuation.

With ``use_cache=True`` each step feeds only the newest token and reuses the keys and values of
the earlier ones (``KVCache``); without it each step recomputes the whole prefix.  Both give the
same tokens; the cache makes a step O(T) instead of O(T²).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import check_int, check_number
from .masks import padding_mask
from .transformer import Transformer


class _Stepper:
    """Gives the next-token logits ``[N, V]`` for a batch of prefixes ``[N, t]``."""

    def __init__(self, model: nn.Module, src: Tensor, use_cache: bool, repeat: int = 1):
        self.model, self.use_cache = model, use_cache
        self.is_seq2seq = isinstance(model, Transformer)
        if self.is_seq2seq:
            model.check_tokens("src", src, model.config.src_vocab_size)  # once, not per step
            mask = padding_mask(src, model.config.pad_id)
            memory = model._encode(src, mask)
            self.memory = memory.repeat_interleave(repeat, dim=0)
            self.memory_mask = mask.repeat_interleave(repeat, dim=0)
        else:
            model.check_tokens("prompt", src, model.config.vocab_size, offset=0)
        self.cache = model.new_cache() if use_cache else None

    def __call__(self, tokens: Tensor) -> Tensor:
        # The tokens are the checked input plus argmax/sampled ids: the models' unchecked internals
        # take them (a range check would synchronise host and device at every step).
        new = tokens if self.cache is None else tokens[:, len(self.cache[0]) :]
        if self.is_seq2seq:
            logits = self.model._decode(new, self.memory, None, self.memory_mask, self.cache)
        else:
            logits = self.model._forward(new, self.cache)
        return logits[:, -1]

    def reorder(self, index: Tensor) -> None:
        """Keep rows ``index`` of the cache and the memory (beam search)."""
        for kv in self.cache or []:
            kv.reorder(index)
        if self.is_seq2seq:
            self.memory, self.memory_mask = self.memory[index], self.memory_mask[index]


def _start(model: nn.Module, src: Tensor, bos_id: int) -> Tensor:
    if isinstance(model, Transformer):
        return torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    return src


def _finish(model: nn.Module, tokens: Tensor, start: int, eos_id: int | None) -> Tensor:
    """Drop ``<bos>`` (seq2seq) and pad every row after its first ``eos_id``."""
    new = tokens[:, start:]
    if eos_id is not None:
        is_eos = (new == eos_id).long()
        after_eos = is_eos.cumsum(dim=1) - is_eos > 0
        new = new.masked_fill(after_eos, model.config.pad_id)
    prefix = tokens[:, 1:start] if isinstance(model, Transformer) else tokens[:, :start]
    return torch.cat([prefix, new], dim=1)


@torch.no_grad()
def generate_tokens(
    model: nn.Module,
    src: Tensor,
    max_new_tokens: int,
    temperature: float = 0.0,
    top_k: int | None = None,
    bos_id: int = 1,
    eos_id: int | None = 2,
    use_cache: bool = True,
) -> Tensor:
    """Greedy decoding (``temperature=0``) or sampling, one token at a time.

    Returns the new tokens ``[B, ≤ max_new_tokens]`` for a ``Transformer`` and prompt +
    continuation for a ``DecoderOnlyLM``.  A row stops at ``eos_id`` (kept) and is padded after it.
    """
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_number("temperature", temperature, 0.0)
    if top_k is not None:
        check_int("top_k", top_k, minimum=1)
    was_training = model.training
    model.eval()
    step = _Stepper(model, src, use_cache)
    tokens = _start(model, src, bos_id)
    start = tokens.size(1)
    done = torch.zeros(tokens.size(0), dtype=torch.bool, device=tokens.device)
    for _ in range(max_new_tokens):
        logits = step(tokens)
        if temperature == 0:
            next_token = logits.argmax(dim=-1)
        else:
            logits = logits / temperature
            if top_k is not None:
                kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            next_token = torch.multinomial(logits.softmax(dim=-1), 1).squeeze(1)
        tokens = torch.cat([tokens, next_token[:, None]], dim=1)
        if eos_id is not None:
            done |= next_token == eos_id
            if bool(done.all()):
                break
    model.train(was_training)
    return _finish(model, tokens, start, eos_id)


def greedy_decode(
    model: nn.Module, src: Tensor, max_new_tokens: int, bos_id: int = 1, eos_id: int | None = 2, use_cache: bool = True
) -> Tensor:
    """Pick the most likely token at every step, ``y_t = argmax_w p(w | y_<t, x)``, for at most
    ``max_new_tokens`` steps.  Output as :func:`generate_tokens`."""
    return generate_tokens(model, src, max_new_tokens, 0.0, None, bos_id, eos_id, use_cache)


@torch.no_grad()
def beam_search(
    model: nn.Module,
    src: Tensor,
    max_new_tokens: int,
    beam_size: int = 4,
    length_penalty: float = 0.6,
    bos_id: int = 1,
    eos_id: int | None = 2,
    use_cache: bool = True,
) -> Tensor:
    r"""Keep the ``beam_size`` most likely prefixes at every step (at most ``max_new_tokens`` steps);
    return the best per row.

    Hypotheses are ranked by :math:`\log p(y \mid x) / lp(y)` with the length penalty of
    Wu et al. (2016), :math:`lp(y) = ((5 + |y|) / 6)^\alpha` (the paper uses beam 4, α = 0.6).
    With ``beam_size=1`` this is greedy decoding.  Output as :func:`greedy_decode`.
    """
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_int("beam_size", beam_size, minimum=1)
    check_number("length_penalty", length_penalty, 0.0)
    was_training = model.training
    model.eval()
    B, K = src.size(0), beam_size
    step = _Stepper(model, src, use_cache, repeat=K)
    tokens = _start(model, src, bos_id).repeat_interleave(K, dim=0)  # [B*K, t]
    start = tokens.size(1)
    scores = torch.full((B, K), float("-inf"), device=tokens.device)
    scores[:, 0] = 0.0  # all beams start equal: keep one
    lengths = torch.zeros(B * K, device=tokens.device)
    done = torch.zeros(B * K, dtype=torch.bool, device=tokens.device)
    for _ in range(max_new_tokens):
        logp = step(tokens).log_softmax(dim=-1)  # [B*K, V]
        V = logp.size(-1)
        if eos_id is not None:  # a finished hypothesis only repeats <eos>, free
            only_eos = torch.full_like(logp[:1], float("-inf"))
            only_eos[0, eos_id] = 0.0
            logp = torch.where(done[:, None], only_eos, logp)  # (no boolean indexing: no sync)
        candidates = (scores.view(B * K, 1) + logp).view(B, K * V)
        scores, flat = candidates.topk(K, dim=-1)  # [B, K]
        beam = flat // V + torch.arange(B, device=flat.device)[:, None] * K
        beam, next_token = beam.view(-1), (flat % V).view(-1)
        tokens = torch.cat([tokens[beam], next_token[:, None]], dim=1)
        done, lengths = done[beam], lengths[beam] + (~done[beam]).float()
        step.reorder(beam)
        if eos_id is not None:
            done = done | (next_token == eos_id)
            if bool(done.all()):
                break
    model.train(was_training)
    penalty = ((5.0 + lengths) / 6.0) ** length_penalty
    best = (scores.view(-1) / penalty).view(B, K).argmax(dim=-1)
    rows = best + torch.arange(B, device=best.device) * K
    return _finish(model, tokens[rows], start, eos_id)
