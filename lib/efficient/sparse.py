r"""Sparse attention patterns: each query attends to a few keys, chosen by position.

- sliding window (Longformer's local attention): query ``i`` sees keys ``|i - j| ≤ w``;
- BigBird (Zaheer et al., 2020): the window, plus ``g`` global tokens that see and are seen by all,
  plus ``r`` random keys per query, earlier keys fixed by the query's position (and a seed), so that
  a prefix's pattern is the pattern's prefix.

:func:`sliding_window_mask` and :func:`bigbird_mask` return the ``[T, T]`` bool masks, to use with any
of lib's attention functions (``True`` = may attend); a dense mask still costs O(T²).
:func:`sliding_window_attention` computes the window pattern at O(T·w) cost: it only ever forms the
band of scores each block of queries can see.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..model.checks import check_int
from ..training.device import check_seed
from .blockwise import memory_efficient_attention
from .inputs import check_attention_inputs


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
    - every other row ``i`` gets ``min(n_random, max(0, i − window − n_global))`` random keys: the
      ``n_random`` keys ``j`` with the highest score, a hash of ``(seed, i, j)``, among the
      *earlier* keys it does not already see, ``n_global ≤ j < i − window`` (all of them when there
      are fewer). Global rows see everything already; the first rows have few or no candidates.

    The random keys of row ``i`` depend on ``i``, the window, ``n_global`` and the seed (an int in
    ``[0, 2⁶⁴)``, :func:`~lib.training.device.check_seed`), never on ``T``, so the pattern of a prefix
    is the prefix of the pattern: ``bigbird_mask(T)[:t, :t] == bigbird_mask(t)`` for every ``t ≤ T``. A causal decoder fed one token
    at a time with its cache sees the rows teacher forcing sees (and none of its random keys is lost
    to the causal mask); an encoder's random keys all point backwards, its long-range links forwards
    are the global tokens.
    """
    mask = sliding_window_mask(T, window)
    check_int("n_global", n_global, minimum=0, maximum=T)
    check_int("n_random", n_random, minimum=0)
    check_seed("seed", seed, bits=64)
    mask[:n_global, :] = True
    mask[:, :n_global] = True
    if n_random:
        candidates = (~mask).tril(-1)  # the earlier keys j < i that row i does not see yet
        scores = _pair_scores(seed, T).masked_fill(~candidates, -1)
        best, chosen = scores.topk(min(n_random, T), dim=-1)
        mask |= torch.zeros_like(mask).scatter(1, chosen, best >= 0)  # fewer candidates: only those
    return mask.to(device)


_WORD = 0xFFFFFFFF  # the low 32 bits


def _times(x: Tensor, multiplier: int) -> Tensor:
    """``x · multiplier mod 2³²`` for 32-bit words in int64, in two 16-bit halves: no overflow."""
    low, high = multiplier & 0xFFFF, multiplier >> 16
    return (x * low + (((x * high) & 0xFFFF) << 16)) & _WORD


def _hash32(x: Tensor) -> Tensor:
    """lowbias32 (C. Wellons' hash-prospector): an invertible hash of 32-bit words (int64 in ``[0, 2³²)``)."""
    x = _times(x ^ (x >> 16), 0x7FEB352D)
    x = _times(x ^ (x >> 15), 0x846CA68B)
    return x ^ (x >> 16)


def _pair_scores(seed: int, T: int) -> Tensor:
    """``[T, T]`` int64: a pseudo-random score in ``[0, 2³²)`` for each pair ``(i, j)``, a hash of
    ``(seed, i, j)`` (counter-based: no generator, no state), so that entry ``(i, j)`` is the same
    whatever ``T``. A key per seed, from it a key per row, from it the row's scores: ``hash(key_i xor j)``,
    distinct within a row (the hash is invertible), so choosing the highest has no ties."""
    seed_key = _hash32(_hash32(torch.tensor(seed & _WORD)) ^ (seed >> 32))
    positions = torch.arange(T, dtype=torch.int64)
    row_key = _hash32(seed_key ^ positions)  # [T]
    return _hash32(row_key[:, None] ^ positions[None, :])


def sliding_window_attention(q: Tensor, k: Tensor, v: Tensor, window: int, mask: Tensor | None = None,
                             is_causal: bool = False, scale: float | None = None, block_size: int = 64) -> Tensor:  # fmt: skip
    r"""Attention restricted to ``|i − j| ≤ window`` (and ``j ≤ i`` if ``is_causal``), at O(T·w) cost.

    Equals full attention with ``mask & sliding_window_mask(T, window)``. Self-attention only
    (``q``, ``k``, ``v`` all ``[B, H, T, d]``). Queries go in blocks of ``block_size``; block
    ``[s, e)`` only sees keys ``[s − w, e + w)``, so each block costs ``block × (block + 2w)``.
    A ``mask`` (broadcasting to ``[B, H, T, T]``) is cut to the same band.
    """
    mask, scale = check_attention_inputs(q, k, v, mask, scale)
    check_int("window", window, minimum=0)
    check_int("block_size", block_size, minimum=1)
    T = q.size(-2)
    if k.size(-2) != T:
        raise ValueError(f"sliding_window_attention is self-attention: T_q={T} but T_k={k.size(-2)}")
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
