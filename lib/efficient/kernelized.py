r"""Attention in linear time: Performer's random features and Linformer's low-rank projection.

**Performer** (Choromanski et al., 2021, FAVOR+). The softmax kernel is an expectation over random
vectors ``ω ~ N(0, I)``: ``exp(x·y) = E[φ(x)·φ(y)]`` with the *positive* features
``φ(x) = exp(Ωx − ‖x‖²/2) / √m``. With ``m`` features ``Ω [m, d]`` (drawn in orthogonal blocks),

.. math::
    \mathrm{softmax}(Q K^\top) V \approx \frac{\phi(Q)\,(\phi(K)^\top V)}{\phi(Q)\,(\phi(K)^\top \mathbf 1)}

and the brackets make it O(T·m·d): no ``T × T`` matrix. The numerator and the denominator are
each unbiased estimates (of ``exp(Q Kᵀ) V`` and of the softmax's normaliser ``exp(Q Kᵀ) 1``), but
their ratio is not: it is a *consistent* estimate of ``softmax(Q Kᵀ) V``, with a bias of order
``1/m`` and a spread of order ``1/√m``, both shrinking as ``m`` grows.

**Linformer** (Wang et al., 2020). Project keys and values along the *sequence* from length ``T`` to
``k``: ``K' = E K``, ``V' = F V`` with ``E, F [k, T]``, then ``softmax(Q K'ᵀ/√d) V'`` is ``T × k``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..model.checks import check_choice, check_int
from ..training.device import check_seed
from .inputs import check_attention_inputs, key_mask


def orthogonal_features(
    n_features: int, d: int, seed: int = 0, device: torch.device | str | None = None, dtype: torch.dtype = torch.float32
) -> Tensor:
    """``Ω [n_features, d]``: Gaussian rows, orthogonal within each block of ``d`` (FAVOR+'s ORF)."""
    check_int("n_features", n_features, minimum=1)
    check_int("d", d, minimum=1)
    check_seed("seed", seed)
    generator = torch.Generator().manual_seed(seed)
    blocks = []
    for _ in range(math.ceil(n_features / d)):
        g = torch.randn(d, d, generator=generator, dtype=torch.float64)
        Q, R = torch.linalg.qr(g)
        blocks.append((Q * torch.sign(torch.diagonal(R))).T)  # d orthonormal rows, uniformly rotated
    norms = torch.randn(n_features, d, generator=generator, dtype=torch.float64).norm(dim=-1)
    omega = torch.cat(blocks)[:n_features] * norms[:, None]  # rows with Gaussian lengths
    return omega.to(device=device, dtype=dtype)


def positive_features(x: Tensor, omega: Tensor, is_query: bool) -> Tensor:
    r"""``φ(x) = exp(Ωx − ‖x‖²/2) / √m`` for the rows of ``x [.., T, d]``, up to a constant factor.

    The constant (a max subtracted inside the ``exp``, for stability) cancels in the ratio of
    :func:`performer_attention`: per row for queries, one for all keys.
    """
    logits = x @ omega.T - (x * x).sum(dim=-1, keepdim=True) / 2  # [.., T, m]
    shift = logits.amax(dim=-1, keepdim=True) if is_query else logits.amax(dim=(-2, -1), keepdim=True)
    return torch.exp(logits - shift.detach()) / math.sqrt(omega.size(0))


def performer_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    n_features: int = 256,
    seed: int = 0,
    scale: float | None = None,
    mask: Tensor | None = None,
) -> Tensor:
    r"""FAVOR+ attention (non-causal), linear in ``T``: an estimate of ``softmax(Q Kᵀ·scale) V``.

    Its numerator ``φ(Q) (φ(K)ᵀ V)`` and denominator ``φ(Q) (φ(K)ᵀ 1)`` are unbiased; their ratio,
    the output, is biased (by ``O(1/n_features)``) but consistent: its error falls as ``n_features``
    grows. ``q [B, H, T_q, d]``, ``k [B, H, T_k, d]``, ``v [B, H, T_k, d_v]`` → ``[B, H, T_q, d_v]``.
    ``scale`` defaults to ``1/√d`` (split as ``√scale`` on ``q`` and on ``k``). ``mask`` may only
    mask keys (shape ``[.., 1, T_k]``, e.g. a padding mask): their features are set to zero.
    ``seed`` fixes the random features.
    """
    mask, scale = check_attention_inputs(q, k, v, mask, scale)
    check_int("n_features", n_features, minimum=1)
    keep = key_mask(mask, k.size(-2), "performer_attention")  # [.., T_k, 1] or None
    omega = orthogonal_features(n_features, q.size(-1), seed, q.device, q.dtype)
    phi_q = positive_features(q * scale**0.5, omega, is_query=True)  # [.., T_q, m]
    phi_k = positive_features(k * scale**0.5, omega, is_query=False)  # [.., T_k, m]
    if keep is not None:
        phi_k = phi_k * keep
    kv = phi_k.transpose(-2, -1) @ v  # [.., m, d_v]: no T × T
    normaliser = phi_q @ phi_k.sum(dim=-2, keepdim=True).transpose(-2, -1)  # [.., T_q, 1]
    return (phi_q @ kv) / normaliser.clamp_min(torch.finfo(q.dtype).tiny)


class LinformerProjection(nn.Module):
    r"""Linformer's sequence projections ``E, F [k, max_len]``, used as an attention kernel.

    ``forward(q, k, v, mask=None, is_causal=False, scale=None) -> out`` computes
    ``softmax(Q (E K)ᵀ · scale) (F V)``. They start as *pooling*: row ``r`` averages the ``r``-th of
    ``k`` equal segments of the sequence, so at ``k = T`` this is exact attention; training then
    learns them (``init="random"``: Gaussian entries of variance ``1/k``, the usual Linformer start).

    The ``max_len`` columns are *slots* that a sequence of ``T_k ≤ max_len`` keys fills evenly:
    position ``j`` takes the slots ``s`` with ``⌊s·T_k/max_len⌋ = j`` and the sum of their weights
    (:meth:`fit`), so the segments are segments of *this* sequence, whatever its length. (Cutting
    ``E`` to its first ``T_k`` columns instead would leave the rows of the later segments empty:
    zero keys that still take softmax mass.) A key mask (``[.., 1, T_k]``, e.g. padding) zeros the
    masked keys and values before the projection, and a projected key made of masked keys only takes
    no softmax mass. Causal attention has no Linformer form: ``E K`` mixes future keys into every
    projected key.
    """

    def __init__(self, k: int, max_len: int, init: str = "pool"):
        super().__init__()
        check_int("max_len", max_len, minimum=1)
        check_int("k", k, minimum=1, maximum=max_len)  # more rows than positions: nothing to compress
        check_choice("init", init, ("pool", "random"))
        self.k, self.max_len = k, max_len
        if init == "pool":
            segment = torch.arange(max_len) * k // max_len  # which segment each slot is in
            weight = (segment[None, :] == torch.arange(k)[:, None]).float()
            weight = weight / weight.sum(dim=-1, keepdim=True)  # k <= max_len: no segment is empty
        else:
            weight = torch.randn(k, max_len) / math.sqrt(k)
        self.E = nn.Parameter(weight.clone())
        self.F = nn.Parameter(weight.clone())

    def fit(self, weight: Tensor, T_k: int) -> Tensor:
        """``weight [k, max_len]`` for a sequence of ``T_k`` keys: ``[k, T_k]``, the slots of each
        position summed (position ``j`` holds slots ``s`` with ``⌊s·T_k/max_len⌋ = j``)."""
        if T_k == self.max_len:
            return weight
        position = torch.arange(self.max_len, device=weight.device) * T_k // self.max_len
        return weight.new_zeros(self.k, T_k).index_add(1, position, weight)

    def forward(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, is_causal: bool = False,
                scale: float | None = None) -> Tensor:  # fmt: skip
        mask, scale = check_attention_inputs(q, k, v, mask, scale)
        T_k = k.size(-2)
        if is_causal:
            raise ValueError(
                "Linformer is non-causal (E K mixes future keys into every projected key); got is_causal=True"
            )
        if T_k > self.max_len:
            raise ValueError(f"sequence of T_k={T_k} keys is longer than the Linformer's max_len={self.max_len}")
        keep = key_mask(mask, T_k, "Linformer")  # [.., T_k, 1] or None
        E, F = self.fit(self.E, T_k), self.fit(self.F, T_k)  # [k, T_k]
        if keep is not None:
            k, v = k * keep, v * keep
        scores = (q @ (E @ k).transpose(-2, -1)) * scale  # [.., T_q, k]
        if keep is not None:  # a projected key made of masked keys only is absent
            absent = (E.abs() @ keep.to(E.dtype)) == 0  # [.., k, 1]
            scores = scores.masked_fill(absent.transpose(-2, -1), torch.finfo(scores.dtype).min)
        return scores.softmax(dim=-1) @ (F @ v)
