r"""Generation: greedy search, sampling and beam search, with or without a key/value cache.

One loop serves every model that offers the stepping interface
(:class:`~lib.model.transformer.Transformer`, :class:`~lib.model.lm.DecoderOnlyLM`,
:class:`~lib.rnn.Seq2SeqRNN`):

- ``starts_from_bos``: decoding starts from ``<bos>`` (left out of the result), else from ``src``
  itself (a prompt, kept in the result);
- ``generation_context(src) -> tuple`` of batch-first tensors every step attends to (an encoder's memory);
- ``new_cache()`` -> per-layer caches with ``reorder(index)``, or ``None`` (nothing to cache);
- ``next_logits(tokens, context, cache) -> [B, V]``: the next token's logits, given the whole prefix
  (no cache) or only the tokens the cache has not seen.

With a cache a step costs O(T) instead of O(T²); both give the same tokens. A row stops at
``eos_id`` (kept) and is padded with ``pad_id`` after it; ``eos_id=None`` (the default) never stops.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from .checks import check_int, check_number
from .modes import eval_mode


class _Decoding:
    """The state of one decoding run: the tokens so far, the context, the cache."""

    def __init__(self, model: nn.Module, src: Tensor, bos_id: int, use_cache: bool, repeat: int = 1):
        self.model = model
        self.context = tuple(t.repeat_interleave(repeat, dim=0) for t in model.generation_context(src))
        start = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
        self.tokens = (start if model.starts_from_bos else src).repeat_interleave(repeat, dim=0)
        self.start = self.tokens.size(1)
        self.cache = model.new_cache() if use_cache else None
        self.fed = 0  # how many tokens the cache has seen

    def next_logits(self) -> Tensor:
        new = self.tokens[:, self.fed :] if self.cache is not None else self.tokens
        self.fed = self.tokens.size(1) if self.cache is not None else 0
        return self.model.next_logits(new, self.context, self.cache)

    def keep(self, index: Tensor, next_token: Tensor) -> None:
        """Keep rows ``index`` (beam search) and append ``next_token``."""
        self.tokens = torch.cat([self.tokens[index], next_token[:, None]], dim=1)
        self.context = tuple(t[index] for t in self.context)
        for layer_cache in self.cache or []:
            layer_cache.reorder(index)

    def result(self, tokens: Tensor, eos_id: int | None) -> Tensor:
        """Pad every row after its first ``eos_id``; drop ``<bos>``, keep a prompt."""
        new = tokens[:, self.start :]
        if eos_id is not None:
            is_eos = (new == eos_id).long()
            new = new.masked_fill(is_eos.cumsum(dim=1) - is_eos > 0, self.model.config.pad_id)
        return new if self.model.starts_from_bos else torch.cat([tokens[:, : self.start], new], dim=1)


@torch.no_grad()
def generate_tokens(
    model: nn.Module,
    src: Tensor,
    max_new_tokens: int,
    temperature: float = 0.0,
    top_k: int | None = None,
    bos_id: int = 1,
    eos_id: int | None = None,
    use_cache: bool = True,
) -> Tensor:
    """Greedy decoding (``temperature=0``) or sampling from ``softmax(logits / temperature)``,
    restricted to the ``top_k`` most likely tokens if given; one token at a time.

    Returns the new tokens ``[B, ≤ max_new_tokens]`` (models that start from ``<bos>``) or prompt +
    continuation (a ``DecoderOnlyLM``).
    """
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_number("temperature", temperature, 0.0)
    if top_k is not None:
        check_int("top_k", top_k, minimum=1)
    with eval_mode(model):
        run = _Decoding(model, src, bos_id, use_cache)
        rows = torch.arange(src.size(0), device=src.device)
        done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
        for _ in range(max_new_tokens):
            logits = run.next_logits()
            if temperature == 0:
                next_token = logits.argmax(dim=-1)
            else:
                logits = logits / temperature
                if top_k is not None:
                    kth = logits.topk(min(top_k, logits.size(-1)), dim=-1).values[:, -1:]
                    logits = logits.masked_fill(logits < kth, float("-inf"))
                next_token = torch.multinomial(logits.softmax(dim=-1), 1).squeeze(1)
            run.keep(rows, next_token)
            if eos_id is not None:
                done |= next_token == eos_id
                if bool(done.all()):
                    break
        return run.result(run.tokens, eos_id)


def greedy_decode(
    model: nn.Module,
    src: Tensor,
    max_new_tokens: int,
    bos_id: int = 1,
    eos_id: int | None = None,
    use_cache: bool = True,
) -> Tensor:
    """Pick the most likely token at every step, ``y_t = argmax_w p(w | y_<t, x)``, for at most
    ``max_new_tokens`` steps. Output as :func:`generate_tokens`."""
    return generate_tokens(model, src, max_new_tokens, 0.0, None, bos_id, eos_id, use_cache)


@torch.no_grad()
def beam_search(
    model: nn.Module,
    src: Tensor,
    max_new_tokens: int,
    beam_size: int = 4,
    length_penalty: float = 0.6,
    bos_id: int = 1,
    eos_id: int | None = None,
    use_cache: bool = True,
) -> Tensor:
    r"""Keep the ``beam_size`` most likely prefixes at every step (at most ``max_new_tokens`` steps);
    return the best per row.

    Hypotheses are ranked by :math:`\log p(y \mid x) / lp(y)` with the length penalty of
    Wu et al. (2016), :math:`lp(y) = ((5 + |y|) / 6)^\alpha` (the paper uses beam 4, α = 0.6).
    With ``beam_size=1`` this is greedy decoding. Output as :func:`generate_tokens`.
    """
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_int("beam_size", beam_size, minimum=1)
    check_number("length_penalty", length_penalty, 0.0)
    B, K = src.size(0), beam_size
    with eval_mode(model):
        run = _Decoding(model, src, bos_id, use_cache, repeat=K)  # [B*K, t]
        scores = torch.full((B, K), float("-inf"), device=src.device)
        scores[:, 0] = 0.0  # all beams start equal: keep one
        lengths = torch.zeros(B * K, device=src.device)
        done = torch.zeros(B * K, dtype=torch.bool, device=src.device)
        for _ in range(max_new_tokens):
            logp = run.next_logits().log_softmax(dim=-1)  # [B*K, V]
            V = logp.size(-1)
            if eos_id is not None:  # a finished hypothesis only repeats <eos>, free
                only_eos = torch.full_like(logp[:1], float("-inf"))
                only_eos[0, eos_id] = 0.0
                logp = torch.where(done[:, None], only_eos, logp)
            scores, flat = (scores.view(B * K, 1) + logp).view(B, K * V).topk(K, dim=-1)  # [B, K]
            beam = (flat // V + torch.arange(B, device=flat.device)[:, None] * K).view(-1)
            next_token = (flat % V).view(-1)
            run.keep(beam, next_token)
            done, lengths = done[beam], lengths[beam] + (~done[beam]).float()
            if eos_id is not None:
                done = done | (next_token == eos_id)
                if bool(done.all()):
                    break
        penalty = ((5.0 + lengths) / 6.0) ** length_penalty
        best = (scores.view(-1) / penalty).view(B, K).argmax(dim=-1) + torch.arange(B, device=src.device) * K
        return run.result(run.tokens[best], eos_id)
