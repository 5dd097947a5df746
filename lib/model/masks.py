"""Attention masks.

Convention (the one of ``torch.nn.functional.scaled_dot_product_attention``):
a mask is boolean and ``True`` means *this query may attend to this key*.
Masks broadcast to ``[B, H, T_q, T_k]``.

``torch.nn.MultiheadAttention`` uses the opposite meaning for a boolean mask
(``True`` = *masked out*): flip it with ``~mask`` when you pass one of ours there.
"""

from __future__ import annotations

import weakref

import torch
from torch import Tensor

from .checks import check_int, check_tensor


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """The look-ahead mask: query ``i`` may attend to keys ``j <= i``.

    Returns a ``[T, T]`` bool tensor, ``True`` on and below the diagonal::

        causal_mask(3) = [[1, 0, 0],
                          [1, 1, 0],
                          [1, 1, 1]]
    """
    check_int("T", T, minimum=1)
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(tokens: Tensor, pad_id: int) -> Tensor:
    """Mask out padding keys: ``True`` where ``tokens != pad_id``.

    tokens: ``[B, T]`` token ids.  Returns ``[B, 1, 1, T]`` bool, which
    broadcasts over heads and queries.
    """
    check_tensor("tokens", tokens)
    if tokens.dim() != 2:
        raise ValueError(f"tokens must be a [B, T] tensor of ids, got shape {tuple(tokens.shape)}")
    return (tokens != pad_id)[:, None, None, :]


def check_mask(mask: Tensor, shape: tuple[int, int, int, int]) -> Tensor:
    """Validate ``mask`` against ``(B, H, T_q, T_k)`` and return it as a 4-d bool tensor.

    Raises a ``TypeError`` for a non-boolean mask and a ``ValueError`` for one
    that does not broadcast.
    """
    check_tensor("mask", mask)
    if mask.dtype != torch.bool:
        raise TypeError(f"mask must have dtype torch.bool (True = may attend), got {mask.dtype}")
    ok = mask.dim() <= 4 and all(m == 1 or m == s for m, s in zip(reversed(mask.shape), reversed(shape)))
    if not ok:
        raise ValueError(f"mask of shape {tuple(mask.shape)} does not broadcast to (B, H, T_q, T_k) = {tuple(shape)}")
    while mask.dim() < 4:
        mask = mask.unsqueeze(0)
    return mask


# The last mask compared, its version counter and the answer: every layer of a model gets the same
# mask object, so a forward pass compares (and synchronises host and device) once, not once per layer.
_last_answer: tuple[weakref.ref, int, bool] | None = None


def is_causal_mask(mask: Tensor) -> bool:
    """Is ``mask`` (bool, ``[T, T]`` or ``[1, 1, T, T]``) exactly :func:`causal_mask` ``(T)``?

    :class:`~lib.model.attention.MultiHeadAttention` then passes ``is_causal=True`` to the fused kernel
    instead of the mask: same result, but the kernel skips the masked upper triangle.  Comparing
    reads the mask's values (a host-device synchronisation on an accelerator), so the answer for the
    last mask asked about is remembered until that tensor is modified or freed.
    """
    global _last_answer
    T = mask.size(-1)
    if mask.dim() < 2 or mask.size(-2) != T or mask.numel() != T * T:
        return False
    try:
        version = mask._version
    except RuntimeError:  # an inference-mode tensor has no version counter: do not remember it
        version = None
    last = _last_answer
    if version is not None and last is not None and last[0]() is mask and last[1] == version:
        return last[2]
    answer = torch.equal(mask.reshape(T, T), torch.ones(T, T, dtype=torch.bool, device=mask.device).tril())
    if version is not None:
        _last_answer = (weakref.ref(mask), version, answer)
    return answer


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
