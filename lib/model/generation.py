r"""Generation: greedy search, sampling and beam search, with or without a key/value cache.

One loop for every model with the stepping interface :class:`Decoder`. A cache makes a step O(T), not O(T²),
with the same tokens. A row stops at ``eos_id`` (kept), then is padded; ``eos_id=None`` never stops. With learned
positions, the start and the ``max_new_tokens - 1`` tokens fed back must fit in ``max_len``, else generation is
refused up front (never cropped, as nanoGPT does: that moves every token to a new position).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import torch
from torch import Tensor, nn

from .checks import check_int, check_number, check_tensor


@contextmanager
def eval_mode(model: nn.Module) -> Iterator[nn.Module]:
    """``model.eval()`` inside the ``with`` block; its previous mode comes back on exit, even on error."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)


class Decoder(Protocol):
    """What generation calls on a model (an ``nn.Module``, switched to ``eval()`` while it runs)."""

    starts_from_bos: bool  # start from <bos>, left out of the result; else from src, a prompt that stays
    max_positions: int | None  # how many tokens the decoder can read (learned positions); None: any number
    config: Any  # generation reads config.pad_id

    def generation_context(self, src: Tensor) -> tuple[Tensor, ...]: ...  # checks src; what every step attends to
    def new_cache(self) -> list[Any] | None: ...  # per-layer caches with reorder(index) (beam search), or None
    def next_logits(self, tokens: Tensor, context: tuple[Tensor, ...], cache: list[Any] | None) -> Tensor: ...


class _Decoding:
    """One decoding run: the tokens so far, the context, the cache; refused up front past ``max_positions``."""

    def __init__(self, model: Decoder, src: Tensor, bos_id: int, use_cache: bool, max_new_tokens: int, repeat=1):
        start, self.model = 1 if model.starts_from_bos else check_tensor("src", src).size(-1), model
        if model.max_positions is not None and (fed := start + max_new_tokens - 1) > model.max_positions:
            asked = f"{'src' if model.starts_from_bos else 'prompt'} of length {src.size(-1)} and {max_new_tokens=}"
            raise ValueError(f"{asked} need {fed} positions; learned positions stop at max_len={model.max_positions}")
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

    def append(self, next_token: Tensor, index: Tensor | None = None) -> None:
        """Append ``next_token [N]``, after keeping rows ``index`` (beam search) of everything."""
        if index is not None:
            self.tokens, self.context = self.tokens[index], tuple(t[index] for t in self.context)
            for layer_cache in self.cache or []:
                layer_cache.reorder(index)
        self.tokens = torch.cat([self.tokens, next_token[:, None]], dim=1)

    def result(self, tokens: Tensor, eos_id: int | None) -> Tensor:
        """Pad every row after its first ``eos_id``; drop ``<bos>``, keep a prompt."""
        new = tokens[:, self.start :]
        if eos_id is not None:
            is_eos = (new == eos_id).long()
            new = new.masked_fill(is_eos.cumsum(dim=1) - is_eos > 0, self.model.config.pad_id)
        return new if self.model.starts_from_bos else torch.cat([tokens[:, : self.start], new], dim=1)


@torch.no_grad()
def generate_tokens(model: Decoder, src: Tensor, max_new_tokens: int, temperature: float = 0.0,
                    top_k: int | None = None, bos_id: int = 1, eos_id: int | None = None,
                    use_cache: bool = True) -> Tensor:  # fmt: skip
    """Greedy decoding (``temperature=0``) or sampling from ``softmax(logits / temperature)`` (among the
    ``top_k`` most likely tokens, if given). Returns ``[B, ≤ max_new_tokens]`` new tokens, after the
    prompt if the model starts from one. Past learned positions' ``max_len``: refused up front, not cropped."""
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_number("temperature", temperature, 0.0)
    if top_k is not None:
        check_int("top_k", top_k, minimum=1)
    with eval_mode(model):
        run = _Decoding(model, src, bos_id, use_cache, max_new_tokens)
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
            run.append(next_token)
            if eos_id is not None:
                done |= next_token == eos_id
                if bool(done.all()):
                    break
        return run.result(run.tokens, eos_id)


def greedy_decode(model: Decoder, src: Tensor, max_new_tokens: int, **kwargs) -> Tensor:
    """``y_t = argmax_w p(w | y_<t, x)``: :func:`generate_tokens` at ``temperature=0`` (same keywords, same limit)."""
    return generate_tokens(model, src, max_new_tokens, 0.0, None, **kwargs)


@torch.no_grad()
def beam_search(model: Decoder, src: Tensor, max_new_tokens: int, beam_size: int = 4, length_penalty: float = 0.6,
                bos_id: int = 1, eos_id: int | None = None, use_cache: bool = True) -> Tensor:  # fmt: skip
    r"""Keep the ``beam_size`` most likely prefixes at every step; return the best per row (as
    :func:`generate_tokens`). Ranked by :math:`\log p(y \mid x) / lp(y)`, with Wu et al.'s (2016)
    length penalty :math:`lp(y) = ((5 + |y|) / 6)^\alpha` (the paper: beam 4, α = 0.6). One beam is greedy;
    past learned positions' ``max_len``: refused up front, as :func:`generate_tokens`.
    """
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    check_int("beam_size", beam_size, minimum=1)
    check_number("length_penalty", length_penalty, 0.0)
    B, K = src.size(0), beam_size
    with eval_mode(model):
        run = _Decoding(model, src, bos_id, use_cache, max_new_tokens, K)  # [B*K, t]
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
            run.append(next_token, beam)
            done, lengths = done[beam], lengths[beam] + (~done[beam]).float()
            if eos_id is not None:
                done = done | (next_token == eos_id)
                if bool(done.all()):
                    break
        penalty = ((5.0 + lengths) / 6.0) ** length_penalty
        best = (scores.view(-1) / penalty).view(B, K).argmax(dim=-1) + torch.arange(B, device=src.device) * K
        return run.result(run.tokens[best], eos_id)
