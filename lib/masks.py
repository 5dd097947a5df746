"""Attention masks.

Convention (the one of ``torch.nn.functional.scaled_dot_product_attention``):
a mask is boolean and ``True`` means *this query may attend to this key*.
Masks broadcast to ``[B, H, T_q, T_k]``.

``torch.nn.MultiheadAttention`` uses the opposite meaning for a boolean mask
(``True`` = *masked out*): flip it with ``~mask`` when you pass one of ours there.
"""
from __future__ import annotations

import torch
from torch import Tensor


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """The look-ahead mask: query ``i`` may attend to keys ``j <= i``.

    Returns a ``[T, T]`` bool tensor, ``True`` on and below the diagonal::

        causal_mask(3) = [[1, 0, 0],
                          [1, 1, 0],
                          [1, 1, 1]]
    """
    if not isinstance(T, int) or isinstance(T, bool) or T < 1:
        raise ValueError(f"T={T!r} must be a positive int")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Mask out padding keys: ``True`` where ``tokens != pad_id``.

    tokens: ``[B, T]`` token ids.  Returns ``[B, 1, 1, T]`` bool, which
    broadcasts over heads and queries.
    """
    if not isinstance(tokens, Tensor) or tokens.dim() != 2:
        shape = tuple(tokens.shape) if isinstance(tokens, Tensor) else type(tokens).__name__
        raise ValueError(f"tokens must be a [B, T] tensor of ids, got {shape}")
    return (tokens != pad_id)[:, None, None, :]


def check_mask(mask: Tensor, shape: tuple[int, int, int, int]) -> Tensor:
    """Validate ``mask`` against ``(B, H, T_q, T_k)`` and return it as a 4-d bool tensor.

    Raises a ``TypeError`` for a non-boolean mask and a ``ValueError`` for one
    that does not broadcast.
    """
    if not isinstance(mask, Tensor):
        raise TypeError(f"mask must be a bool Tensor, got {type(mask).__name__}")
    if mask.dtype != torch.bool:
        raise TypeError(
            f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}"
        )
    ok = mask.dim() <= 4 and all(
        m == 1 or m == s for m, s in zip(reversed(mask.shape), reversed(shape))
    )
    if not ok:
        raise ValueError(
            f"mask of shape {tuple(mask.shape)} does not broadcast to "
            f"(B, H, T_q, T_k) = {tuple(shape)}"
        )
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    return mask
