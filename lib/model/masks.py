"""Attention masks: boolean, ``True`` = *this query may attend to this key*.

The convention of ``torch.nn.functional.scaled_dot_product_attention``. Masks broadcast to
``[B, H, T_q, T_k]``. ``torch.nn.MultiheadAttention`` uses the opposite meaning for a boolean mask
(``True`` = *masked out*): flip it with ``~mask`` when you pass one of ours there.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .checks import check_int, check_tensor


def causal_mask(T: int, device: torch.device | str | None = None, T_k: int | None = None) -> Tensor:
    """The look-ahead mask: query ``i`` may attend to keys ``j <= i``.

    Returns a ``[T, T]`` bool tensor, ``True`` on and below the diagonal::

        causal_mask(3) = [[1, 0, 0],
                          [1, 1, 0],
                          [1, 1, 1]]

    With ``T_k > T`` the ``T`` queries are the *last* of ``T_k`` positions (a key/value cache holds
    the first ``T_k - T``): ``[T, T_k]``, query ``i`` sees keys ``j <= T_k - T + i``.
    """
    check_int("T", T, minimum=1)
    T_k = T if T_k is None else check_int("T_k", T_k, minimum=T)
    return torch.ones(T, T_k, dtype=torch.bool, device=device).tril(T_k - T)


def is_causal_mask(mask: Tensor) -> bool:
    """Is ``mask`` (``[T, T]`` or ``[1, 1, T, T]``) exactly :func:`causal_mask` ``(T)``?

    The models ask once per forward pass, so that the fused kernel can skip the masked half.
    """
    T = mask.size(-1)
    if mask.dtype != torch.bool or mask.dim() < 2 or mask.size(-2) != T or mask.numel() != T * T:
        return False
    return torch.equal(mask.reshape(T, T), causal_mask(T, mask.device))


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Mask out padding keys: ``True`` where ``tokens != pad_id``.

    tokens: ``[B, T]`` token ids.  Returns ``[B, 1, 1, T]`` bool, which broadcasts over heads and queries.
    """
    check_tensor("tokens", tokens)
    if tokens.dim() != 2:
        raise ValueError(f"tokens must be a [B, T] tensor of ids, got shape {tuple(tokens.shape)}")
    return (tokens != pad_id)[:, None, None, :]


def check_mask(mask: Tensor, shape: tuple[int, ...]) -> Tensor:
    """``mask`` must be bool and broadcast to ``shape`` (``(B, H, T_q, T_k)``); returns it.

    A ``TypeError`` for a non-boolean mask, a ``ValueError`` for one that does not broadcast.
    """
    check_tensor("mask", mask)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
    ok = mask.dim() <= len(shape) and all(m in (1, s) for m, s in zip(reversed(mask.shape), reversed(shape)))
    if not ok:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to (B, H, T_q, T_k) = {tuple(shape)}")
    return mask


def masked_softmax(scores: Tensor, mask: Tensor | None, dim: int = -1) -> Tensor:
    """``softmax(scores)`` over ``dim`` where ``mask`` (bool, ``True`` = may attend) allows it, else 0.

    Masked scores are filled with the dtype's most negative finite value (not ``-inf``), and the
    weights are multiplied by the mask afterwards: a fully masked row gets all-zero weights, never NaN
    (forward or backward).
    """
    if mask is None:
        return scores.softmax(dim=dim)
    weights = scores.masked_fill(~mask, torch.finfo(scores.dtype).min).softmax(dim=dim)
    return weights * mask
