"""Attention masks: boolean, ``True`` = *this query may attend to this key*, broadcasting to
``[B, H, T_q, T_k]`` (as in ``F.scaled_dot_product_attention``). A 3-D mask is refused (it would broadcast per
*head*; ``nn.MultiheadAttention`` reads it as ``[B·H, ..]``): one per example is ``[B, 1, T_q, T_k]``.
``nn.MultiheadAttention`` reads a boolean mask the other way round (``True`` = masked out): pass it ``~mask``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import check_int, check_tensor


def causal_mask(T: int, device: torch.device | str | None = None, T_k: int | None = None) -> Tensor:
    """The look-ahead mask ``[T, T]``, ``[[1, 0, 0], [1, 1, 0], [1, 1, 1]]`` for ``T = 3``: query ``i`` sees
    keys ``j <= i``. With ``T_k > T``, ``[T, T_k]``: the queries are the last ``T`` of ``T_k`` (a cache)."""
    check_int("T", T, minimum=1)
    T_k = T if T_k is None else check_int("T_k", T_k, minimum=T)
    return torch.ones(T, T_k, dtype=torch.bool, device=device).tril(T_k - T)


def is_causal_mask(mask: Tensor) -> bool:
    """Is ``mask`` (``[T, T]`` or ``[1, 1, T, T]``) exactly :func:`causal_mask` ``(T)``?"""
    T = mask.size(-1)
    if mask.dtype != torch.bool or mask.dim() < 2 or mask.size(-2) != T or mask.numel() != T * T:
        return False
    return torch.equal(mask.reshape(T, T), causal_mask(T, mask.device))


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """``[B, T]`` token ids -> ``[B, 1, 1, T]``, ``True`` where ``tokens != pad_id`` (not a padding key)."""
    if check_tensor("tokens", tokens).dim() != 2:
        raise ValueError(f"tokens must be a [B, T] tensor of ids, got shape {tuple(tokens.shape)}")
    return (tokens != pad_id)[:, None, None, :]


def check_mask(mask: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``mask`` must be bool (else ``TypeError``) and broadcast to ``shape`` (else ``ValueError``)."""
    if check_tensor("mask", mask).dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
    if mask.dim() == 3 and len(shape) == 4:
        raise ValueError(f"mask of shape {tuple(mask.shape)} is 3-D: pass one mask per example as [B, 1, T_q, T_k]")
    if mask.dim() > len(shape) or any(m not in (1, s) for m, s in zip(reversed(mask.shape), reversed(shape))):
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to (B, H, T_q, T_k) = {tuple(shape)}")
    return mask


def masked_softmax(scores: Tensor, mask: Tensor | None, dim: int = -1) -> Tensor:
    """``softmax(scores)`` where ``mask`` allows it, else 0: a fully masked row is all zeros, never NaN
    (masked scores get the dtype's lowest finite value, not ``-inf``, and the mask multiplies the weights)."""
    if mask is None:
        return scores.softmax(dim=dim)
    return scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(dim=dim) * mask
