r"""Sparse attention patterns: each query attends to a few keys, chosen by position.

- sliding window (Longformer's local attention): query ``i`` sees keys ``|i - j| ≤ w``;
- BigBird (Zaheer et al., 2020): the window, plus ``g`` global tokens that see and are seen by all,
  plus ``r`` random keys per query.

:func:`sliding_window_mask` and :func:`bigbird_mask` return the ``[T, T]`` bool masks, to use with any
of lib's attention functions (``True`` = may attend); a dense mask still costs O(T²).
:func:`sliding_window_attention` computes the window pattern at O(T·w) cost: it only ever forms the
band of scores each block of queries can see.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..model.checks import check_int
from .blockwise import memory_efficient_attention
from .inputs import attention_scale, check_qkv, expand_mask


def sliding_window_mask(T: int, window: int, device: torch.device | str | None = None) -> Tensor:
    """``[T, T]`` bool, ``True`` exactly where ``|i − j| ≤ window`` (``window=0``: only itself)."""
    check_int("T", T, minimum=1)
    check_int("window", window, minimum=0)
    i = torch.arange(T, device=device)
    return (i[:, None] - i[None, :]).abs() <= window


def bigbird_mask(
    T: int, window: int, n_global: int, n_random: int, seed: int = 0, device: torch.device | str | None = None
) -> Tensor:
    """``[T, T]`` bool: BigBird's window + global + random pattern (Zaheer et al., 2020).

    - the sliding window ``|i − j| ≤ window``;
    - the first ``n_global`` tokens are global: their rows and columns are all ``True``;
    - every row gets ``n_random`` extra keys, drawn (without replacement, among the keys it does not
      already see) from a generator seeded with ``seed``: the same seed and length, the same pattern.
      A row's random keys depend on ``T``: a decoder that grows its output step by step sees other
      random keys than teacher forcing at the full length does (see :func:`~lib.efficient.use_attention`).
    """
    mask = sliding_window_mask(T, window)
    check_int("n_global", n_global, minimum=0, maximum=T)
    check_int("n_random", n_random, minimum=0)
    check_int("seed", seed)
    mask[:n_global, :] = True
    mask[:, :n_global] = True
    if n_random:
        generator = torch.Generator().manual_seed(seed)
        # random scores, -1 where the row already attends: the top n_random are new keys
        scores = torch.rand(T, T, generator=generator).masked_fill(mask, -1.0)
        chosen = scores.topk(min(n_random, T), dim=-1).indices
        mask.scatter_(1, chosen, True)
    return mask.to(device)


def sliding_window_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    window: int,
    mask: Tensor | None = None,
    is_causal: bool = False,
    scale: float | None = None,
    block_size: int = 64,
) -> Tensor:
    r"""Attention restricted to ``|i − j| ≤ window`` (and ``j ≤ i`` if ``is_causal``), at O(T·w) cost.

    Equals full attention with ``mask & sliding_window_mask(T, window)``. Self-attention only
    (``q``, ``k``, ``v`` all ``[B, H, T, d]``). Queries go in blocks of ``block_size``; block
    ``[s, e)`` only sees keys ``[s − w, e + w)``, so each block costs ``block × (block + 2w)``.
    A ``mask`` (broadcasting to ``[B, H, T, T]``) is cut to the same band.
    """
    check_qkv(q, k, v)
    check_int("window", window, minimum=0)
    check_int("block_size", block_size, minimum=1)
    mask = expand_mask(mask, q, k)
    T = q.size(-2)
    if k.size(-2) != T:
        raise ValueError(f"sliding_window_attention is self-attention: T_q={T} but T_k={k.size(-2)}")
    scale = attention_scale(scale, q)
    outs = []
    for s in range(0, T, block_size):
        e = min(s + block_size, T)
        lo, hi = max(0, s - window), min(T, e + window)
        rows = torch.arange(s, e, device=q.device)[:, None]
        cols = torch.arange(lo, hi, device=q.device)[None, :]
        band = (rows - cols).abs() <= window
        if is_causal:
            band = band & (cols <= rows)
        if mask is not None:
            band = band & _cut(mask, s, e, lo, hi)
        outs.append(
            memory_efficient_attention(
                q[..., s:e, :], k[..., lo:hi, :], v[..., lo:hi, :], band, scale=scale, block_size=hi - lo
            )
        )
    return torch.cat(outs, dim=-2)


def _cut(mask: Tensor, s: int, e: int, lo: int, hi: int) -> Tensor:
    """Rows ``s:e`` and columns ``lo:hi`` of a mask whose last two dims may be broadcast (size 1)."""
    rows = slice(s, e) if mask.size(-2) > 1 else slice(None)
    cols = slice(lo, hi) if mask.size(-1) > 1 else slice(None)
    return mask[..., rows, cols]
