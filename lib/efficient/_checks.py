"""Input checks shared by the efficient-attention variants (clear errors, as everywhere in lib)."""

from __future__ import annotations

import torch
from torch import Tensor


def positive_int(name: str, value: object, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name}={value!r} must be an int >= {minimum}")


def check_qkv(q: Tensor, k: Tensor, v: Tensor) -> None:
    """``q [.., T_q, d_k]``, ``k [.., T_k, d_k]``, ``v [.., T_k, d_v]`` with broadcasting batch dims."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{name} must be a Tensor, got {type(x).__name__}")
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


def expand_mask(mask: Tensor | None, q: Tensor, k: Tensor) -> Tensor | None:
    """Check a bool mask (``True`` = may attend) against ``[.., T_q, T_k]``; give it q's number of dims."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a bool Tensor or None, got {type(mask).__name__}")
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
