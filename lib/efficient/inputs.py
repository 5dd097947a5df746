"""What every efficient-attention variant takes: ``q, k, v [.., T, d]`` and a bool mask, checked once.

The type and value checks themselves are :mod:`lib.model.checks` (``TypeError`` for a wrong type,
``ValueError`` for a wrong value), as everywhere in ``lib``; here only the shapes that the variants
share: the last two dims are ``[T, d]``, and the mask broadcasts to ``[.., T_q, T_k]``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..model.checks import check_number, check_tensor


def check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    """``q [.., T_q, d_k]``, ``k [.., T_k, d_k]``, ``v [.., T_k, d_v]`` with broadcasting batch dims."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, x)
        if x.dim() < 2:
            raise ValueError(f"{name} of shape {tuple(x.shape)} needs at least 2 dims [..., T, d]")
    if q.size(-1) != k.size(-1):
        raise ValueError(f"q has d_k={q.size(-1)} but k has d_k={k.size(-1)}; they must match")
    if k.size(-2) != v.size(-2):
        raise ValueError(f"k has T_k={k.size(-2)} but v has T_k={v.size(-2)}; they must match")
    try:
        torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch dims of q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} do not broadcast"
        ) from None


def attention_scale(scale: float | None, q: Tensor) -> float:
    """The factor on ``Q Kᵀ``: ``scale`` if given (a positive number), else ``1/√d_k``."""
    if scale is None:
        return 1.0 / math.sqrt(q.size(-1))
    return check_number("scale", scale, 0.0, math.inf, low_open=True, high_open=True)


def expand_mask(mask: Tensor | None, q: Tensor, k: Tensor) -> Tensor | None:
    """Check a bool mask (``True`` = may attend) against ``[.., T_q, T_k]``; give it q's number of dims."""
    if mask is None:
        return None
    check_tensor("mask", mask)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
    target = (*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2]), q.size(-2), k.size(-2))
    try:
        if torch.broadcast_shapes(mask.shape, target) != target:
            raise RuntimeError
    except RuntimeError:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to [..., T_q, T_k] = {target}"
        ) from None
    while mask.dim() < len(target):
        mask = mask.unsqueeze(0)
    return mask


def check_attention_inputs(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None, scale: float | None
) -> tuple[Tensor | None, float]:
    """What every variant checks first: ``q, k, v`` (:func:`check_qkv`), the mask (:func:`expand_mask`)
    and the scale (:func:`attention_scale`). Returns ``(mask, scale)``, ready to use."""
    check_qkv(q, k, v)
    return expand_mask(mask, q, k), attention_scale(scale, q)


def key_mask(mask: Tensor | None, T_k: int, variant: str) -> Tensor | None:
    """A mask that only masks keys (``[.., 1, T_k]``, e.g. padding), as ``keep [.., T_k, 1]``.

    The low-rank and kernel variants mix all keys before any query sees them, so a pattern that
    differs from query to query (causal, sliding window) has no form there.
    """
    if mask is None:
        return None
    if mask.size(-2) != 1:
        raise ValueError(
            f"{variant} takes only a key mask [.., 1, T_k] (e.g. padding); got a mask of shape "
            f"{tuple(mask.shape)}: a query-dependent pattern has no linear form"
        )
    keep = mask.transpose(-2, -1)
    return keep.expand(*keep.shape[:-2], T_k, 1)
