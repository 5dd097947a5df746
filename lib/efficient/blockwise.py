r"""Exact attention in blocks of keys, with an online softmax (Rabe & Staats, 2021; Dao et al., 2022).

Full attention materialises the ``T_q × T_k`` score matrix ``S = Q Kᵀ / √d_k``. The online softmax
never does: it visits the keys one block ``j`` at a time and keeps, for every query, a running
maximum ``m``, a running normaliser ``ℓ`` and a running (unnormalised) output ``o``:

.. math::
    m' = \max(m, \max_j S_j), \quad
    \ell' = e^{m - m'} \ell + \textstyle\sum_j e^{S_j - m'}, \quad
    o' = e^{m - m'} o + e^{S_j - m'} V_j

and returns ``o / ℓ``, which is exactly ``softmax(S) V``. Extra memory: one ``T_q × block`` tile.
The backward pass recomputes each tile from ``Q``, ``K`` and the saved log-sum-exp ``m + log ℓ``
instead of storing it (FlashAttention's trick), so training also needs O(T·block), not O(T²).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..model.checks import check_int
from .inputs import check_attention_inputs

NEG_INF = float("-inf")


def _tile_mask(
    mask: Tensor | None, is_causal: bool, T_q: int, T_k: int, start: int, stop: int, device: torch.device
) -> Tensor | None:
    """The ``[.., T_q, stop - start]`` part of the mask for keys ``start:stop`` (``None``: all allowed)."""
    tile = None if mask is None else mask[..., start:stop] if mask.size(-1) > 1 else mask
    if is_causal:  # queries are the last T_q of the T_k positions (as in MultiHeadAttention)
        rows = torch.arange(T_k - T_q, T_k, device=device)[:, None]
        cols = torch.arange(start, stop, device=device)[None, :]
        causal = cols <= rows
        tile = causal if tile is None else tile & causal
    return tile


def _scores(q: Tensor, k_tile: Tensor, scale: float, tile: Tensor | None) -> Tensor:
    s = (q @ k_tile.transpose(-2, -1)) * scale  # [.., T_q, block]
    return s if tile is None else s.masked_fill(~tile, NEG_INF)


def online_softmax_attention(q, k, v, mask, is_causal, scale, block_size):
    """One pass over the keys in tiles of ``block_size``, keeping a running max ``m``, normaliser ``l``
    and output ``o`` per query (the online softmax): ``(out, logsumexp)``, never a ``T × T`` tensor."""
    T_q, T_k = q.size(-2), k.size(-2)
    shape = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    m = torch.full((*shape, T_q, 1), NEG_INF, dtype=q.dtype, device=q.device)  # running max
    l = torch.zeros((*shape, T_q, 1), dtype=q.dtype, device=q.device)  # running normaliser
    o = torch.zeros((*shape, T_q, v.size(-1)), dtype=q.dtype, device=q.device)  # running output
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)
        tile = _tile_mask(mask, is_causal, T_q, T_k, start, stop, q.device)
        s = _scores(q, k[..., start:stop, :], scale, tile)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        shift = m_new.masked_fill(m_new == NEG_INF, 0.0)  # a row with nothing yet: no shift
        p = torch.exp(s - shift)  # masked keys: exp(-inf) = 0
        alpha = torch.exp(m - shift)  # rescales what came before
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        o = alpha * o + p @ v[..., start:stop, :]
        m = m_new
    empty = l == 0  # fully masked rows
    out = torch.where(empty, 0.0, o / l.masked_fill(empty, 1.0))
    lse = torch.where(empty, 0.0, m.masked_fill(empty, 0.0) + torch.log(l.masked_fill(empty, 1.0)))
    return out, lse


class BlockwiseAttention(torch.autograd.Function):
    """Forward by the online softmax; backward by recomputing each tile (no ``T × T`` tensor kept)."""

    @staticmethod
    def forward(ctx, q, k, v, mask, is_causal, scale, block_size):
        out, lse = online_softmax_attention(q, k, v, mask, is_causal, scale, block_size)
        ctx.save_for_backward(q, k, v, out, lse, *(() if mask is None else (mask,)))
        ctx.options = (mask is not None, is_causal, scale, block_size)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, out, lse, *rest = ctx.saved_tensors
        has_mask, is_causal, scale, block_size = ctx.options
        mask = rest[0] if has_mask else None
        T_q, T_k = q.size(-2), k.size(-2)
        shape = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
        D = (grad_out * out).sum(dim=-1, keepdim=True)  # rowsum(dO ∘ O)
        dq = torch.zeros((*shape, T_q, q.size(-1)), dtype=q.dtype, device=q.device)
        dk = torch.zeros((*shape, T_k, k.size(-1)), dtype=k.dtype, device=k.device)
        dv = torch.zeros((*shape, T_k, v.size(-1)), dtype=v.dtype, device=v.device)
        for start in range(0, T_k, block_size):
            stop = min(start + block_size, T_k)
            tile = _tile_mask(mask, is_causal, T_q, T_k, start, stop, q.device)
            k_j, v_j = k[..., start:stop, :], v[..., start:stop, :]
            p = torch.exp(_scores(q, k_j, scale, tile) - lse)  # the softmax tile, recomputed
            dv[..., start:stop, :] = p.transpose(-2, -1) @ grad_out
            ds = p * (grad_out @ v_j.transpose(-2, -1) - D)  # softmax backward
            dq = dq + (ds @ k_j) * scale
            dk[..., start:stop, :] = (ds.transpose(-2, -1) @ q) * scale
        return (_unbroadcast(dq, q), _unbroadcast(dk, k), _unbroadcast(dv, v), None, None, None, None)


def _unbroadcast(grad: Tensor, like: Tensor) -> Tensor:
    """Sum ``grad`` over the batch dimensions that ``like`` broadcast along."""
    while grad.dim() > like.dim():
        grad = grad.sum(0)
    dims = [i for i, n in enumerate(like.shape[:-2]) if n == 1 and grad.size(i) != 1]
    return grad.sum(dims, keepdim=True) if dims else grad


def memory_efficient_attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, is_causal: bool = False,
                               scale: float | None = None, block_size: int = 128) -> Tensor:  # fmt: skip
    r"""Exact ``softmax(Q Kᵀ · scale) V``, computed over blocks of ``block_size`` keys.

    Shapes as in ``F.scaled_dot_product_attention``: ``q [B, H, T_q, d_k]``, ``k [B, H, T_k, d_k]``,
    ``v [B, H, T_k, d_v]`` (any leading dims that broadcast); ``mask`` bool, ``True`` = may attend,
    broadcasting to ``[B, H, T_q, T_k]``; ``is_causal``: query ``i`` sees keys ``j ≤ i`` (queries are
    the last ``T_q`` positions when ``T_q < T_k``); ``scale`` defaults to ``1/√d_k``.
    Returns ``out [B, H, T_q, d_v]``, equal to full attention (values and gradients); a fully masked
    query row gives a zero output. Extra memory is O(T_q · block_size), not O(T_q · T_k).
    """
    mask, scale = check_attention_inputs(q, k, v, mask, scale)
    check_int("block_size", block_size, minimum=1)
    return BlockwiseAttention.apply(q, k, v, mask, bool(is_causal), scale, block_size)
