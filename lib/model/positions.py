"""Position information: self-attention alone is blind to order.

Four ways to give it back, selectable by name in ``TransformerConfig.position``:

- ``"sinusoidal"``: fixed absolute encodings added to the embeddings (Vaswani et al., 2017);
- ``"learned"``: a learned absolute embedding per position, added to the embeddings;
- ``"relative"``: learned embeddings of the clipped distance ``j - i`` inside every
  attention layer (Shaw et al., 2018; :class:`~lib.model.attention.RelativeMultiHeadAttention`);
- ``"rotary"``: queries and keys rotated by an angle proportional to their position,
  so that ``q_i · k_j`` depends only on ``i - j`` (RoPE, Su et al., 2021);
- ``"none"``: no position information at all (the model is permutation-equivariant).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .checks import check_int

POSITIONS = ("sinusoidal", "learned", "relative", "rotary", "none")


def sinusoidal_table(n_positions: int, d_model: int, device: torch.device | str | None = None) -> Tensor:
    r"""The table ``PE [n_positions, d_model]`` of :class:`SinusoidalPositionalEncoding`."""
    position = torch.arange(n_positions, dtype=torch.float32, device=device)[:, None]  # [n, 1]
    inv_freq = torch.exp(torch.arange(0, d_model, 2, device=device) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(n_positions, d_model, device=device)
    pe[:, 0::2] = torch.sin(position * inv_freq)
    pe[:, 1::2] = torch.cos(position * inv_freq[: d_model // 2])
    return pe


class SinusoidalPositionalEncoding(nn.Module):
    r"""Fixed sinusoidal encodings, added to the token embeddings.

    .. math::
        PE_{(p, 2i)} = \sin(p / 10000^{2i/d}), \qquad PE_{(p, 2i+1)} = \cos(p / 10000^{2i/d})

    ``forward(x [B, T, d], offset=0) -> x + PE[offset : offset + T]``.
    The table is the buffer ``pe``, ``[max_len, d]`` to start with; a longer sequence extends it
    (the formula holds for every position, so there is no length limit).
    """

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        check_int("d_model", d_model, minimum=1)
        check_int("max_len", max_len, minimum=1)
        self.d_model = d_model
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        end = offset + x.size(1)
        if end > self.pe.size(0):  # grow the table, never shrink it
            self.pe = sinusoidal_table(max(end, 2 * self.pe.size(0)), self.d_model, self.pe.device)
        return x + self.pe[offset:end].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A learned vector per absolute position, added to the token embeddings.

    ``forward(x [B, T, d], offset=0) -> x + P[offset : offset + T]`` with ``P`` an
    ``nn.Embedding(max_len, d)``.  It cannot say anything about positions it never saw, and it has
    no row at all for positions from ``max_len`` on: the one position scheme with a length limit.
    """

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        check_int("max_len", max_len, minimum=1)
        check_int("d_model", d_model, minimum=1)
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if offset + x.size(1) > self.max_len:
            raise ValueError(
                f"sequence of length {x.size(1)} at offset {offset} is longer than max_len={self.max_len} "
                f"(a learned position table has no row for the positions after it)"
            )
        positions = torch.arange(offset, offset + x.size(1), device=x.device)
        return x + self.embedding(positions)


class RelativePositionEmbedding(nn.Module):
    r"""Relative position representations (Shaw et al., 2018), one per attention layer.

    The distance ``j - i`` is clipped to ``[-k, k]`` and looked up in two tables,
    ``a^K`` and ``a^V`` of shape ``[2k + 1, d_head]``:

    .. math::
        e_{ij} = \frac{q_i \cdot (k_j + a^K_{ij})}{\sqrt{d_k}}, \qquad
        z_i = \sum_j \alpha_{ij} (v_j + a^V_{ij})

    ``forward(T_q, T_k) -> (a_K [T_q, T_k, d_head], a_V [T_q, T_k, d_head])``.
    Queries are taken to be the *last* ``T_q`` of the ``T_k`` positions (true for
    self-attention, with or without a key/value cache).
    """

    def __init__(self, d_head: int, max_distance: int = 16):
        super().__init__()
        check_int("d_head", d_head, minimum=1)
        check_int("max_distance", max_distance, minimum=1)
        self.max_distance = max_distance
        self.key = nn.Embedding(2 * max_distance + 1, d_head)
        self.value = nn.Embedding(2 * max_distance + 1, d_head)
        nn.init.normal_(self.key.weight, std=0.02)
        nn.init.normal_(self.value.weight, std=0.02)

    def forward(self, T_q: int, T_k: int) -> tuple[Tensor, Tensor]:
        device = self.key.weight.device
        q_pos = torch.arange(T_k - T_q, T_k, device=device)
        k_pos = torch.arange(T_k, device=device)
        distance = (k_pos[None, :] - q_pos[:, None]).clamp(-self.max_distance, self.max_distance)
        index = distance + self.max_distance  # [T_q, T_k]
        return self.key(index), self.value(index)


class RotaryEmbedding(nn.Module):
    r"""Rotary position embedding (RoPE, Su et al., 2021).

    Each pair of features ``(x_{2i}, x_{2i+1})`` of a query or key at position ``m``
    is rotated by the angle ``m θ_i`` with ``θ_i = base^{-2i/d}``:

    .. math::
        \begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} =
        \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
        \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}

    so that ``q'_m · k'_n`` depends on ``m - n`` only.  It has no parameters.

    ``forward(x [..., T, d_head], positions) -> rotated x``; ``positions`` is a ``[T]`` tensor of
    positions, or an int ``offset`` for ``offset, …, offset + T - 1``. The angles are computed in
    float32 whatever the dtype of ``x`` (in bfloat16, ``m θ_i`` at ``m`` in the thousands would be off
    by whole radians).
    """

    def __init__(self, d_head: int, base: float = 10000.0):
        super().__init__()
        check_int("d_head", d_head, minimum=1)
        if d_head % 2:
            raise ValueError(f"rotary embeddings need an even d_head, got d_head={d_head}")
        self.d_head, self.base = d_head, float(base)

    def forward(self, x: Tensor, positions: Tensor | int) -> Tensor:
        if isinstance(positions, int):
            positions = torch.arange(positions, positions + x.size(-2), device=x.device)
        theta = self.base ** (-torch.arange(0, self.d_head, 2, device=x.device, dtype=torch.float32) / self.d_head)
        angle = positions.to(device=x.device, dtype=torch.float32)[:, None] * theta  # [T, d/2], float32
        cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
        x_even, x_odd = x[..., 0::2], x[..., 1::2]
        rotated = torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1)
        return rotated.flatten(-2)
