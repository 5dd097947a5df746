"""Position information (self-attention alone is blind to order), by name in a model's config: one of
:data:`POSITIONS` (``"none"``: the model is permutation-equivariant)."""

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

    ``forward(x [B, T, d], offset=0) -> x + PE[offset : offset + T]``; the buffer ``pe`` grows as needed.
    """

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        self.d_model = check_int("d_model", d_model, minimum=1)
        max_len = check_int("max_len", max_len, minimum=1)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        end = offset + x.size(1)
        if end > self.pe.size(0):  # grow the table, never shrink it
            self.pe = sinusoidal_table(max(end, 2 * self.pe.size(0)), self.d_model, self.pe.device)
        return x + self.pe[offset:end].to(x.dtype)


class LearnedPositionalEmbedding(nn.Module):
    """A learned vector per position, ``forward(x [B, T, d], offset=0) -> x + P[offset : offset + T]``: the one
    scheme with a length limit (``P`` has ``max_len`` rows)."""

    def __init__(self, max_len: int, d_model: int):
        super().__init__()
        self.max_len = check_int("max_len", max_len, minimum=1)
        self.embedding = nn.Embedding(max_len, check_int("d_model", d_model, minimum=1))
        nn.init.normal_(self.embedding.weight, std=0.02)

    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        if offset + x.size(1) > self.max_len:
            raise ValueError(f"sequence of length {x.size(1)} at offset {offset} is longer than max_len={self.max_len}")
        return x + self.embedding(torch.arange(offset, offset + x.size(1), device=x.device))


class RelativePositionEmbedding(nn.Module):
    r"""Tables ``a^K, a^V [2k + 1, d_head]`` (Shaw et al., 2018): ``forward(T_q, T_k) -> (a_K, a_V)``, each
    ``[T_q, T_k, d_head]``, rows ``j - i`` clipped to ``[-k, k]`` (queries: the last ``T_q`` of ``T_k``)."""

    def __init__(self, d_head: int, max_distance: int = 16):
        super().__init__()
        check_int("d_head", d_head, minimum=1)
        self.max_distance = check_int("max_distance", max_distance, minimum=1)
        self.key = nn.Embedding(2 * max_distance + 1, d_head)
        self.value = nn.Embedding(2 * max_distance + 1, d_head)
        nn.init.normal_(self.key.weight, std=0.02)
        nn.init.normal_(self.value.weight, std=0.02)

    def rows(self, T_q: int, T_k: int) -> Tensor:
        """``[T_q, T_k]``: the table row of each (query, key) pair, ``j - i`` clipped to ``[-k, k]``, plus ``k``."""
        k, positions = self.max_distance, torch.arange(T_k, device=self.key.weight.device)
        return (positions[None, :] - positions[T_k - T_q :, None]).clamp(-k, k) + k

    def forward(self, T_q: int, T_k: int) -> tuple[Tensor, Tensor]:
        rows = self.rows(T_q, T_k)
        return self.key(rows), self.value(rows)  # [T_q, T_k, d]


class RotaryEmbedding(nn.Module):
    r"""Rotary position embedding (RoPE, Su et al., 2021), no parameters: ``forward(x [.., T, d_head],
    positions [T] or an int offset)`` rotates each pair ``(x_{2i}, x_{2i+1})`` at position ``m`` by
    ``m θ_i``, ``θ_i = base^{-2i/d}``, so that ``q'_m · k'_n`` depends on ``m - n`` only. The angles are
    float32 whatever the dtype of ``x`` (in bfloat16, ``m θ_i`` at ``m`` in the thousands is off by radians)."""

    def __init__(self, d_head: int, base: float = 10000.0):
        super().__init__()
        if check_int("d_head", d_head, minimum=1) % 2:
            raise ValueError(f"rotary embeddings need an even d_head, got d_head={d_head}")
        self.d_head, self.base = d_head, float(base)

    def forward(self, x: Tensor, positions: Tensor | int) -> Tensor:
        if isinstance(positions, int):
            positions = torch.arange(positions, positions + x.size(-2), device=x.device)
        theta = self.base ** (-torch.arange(0, self.d_head, 2, device=x.device, dtype=torch.float32) / self.d_head)
        angle = positions.to(device=x.device, dtype=torch.float32)[:, None] * theta  # [T, d/2], float32
        cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
        x_even, x_odd = x[..., 0::2], x[..., 1::2]
        return torch.stack((x_even * cos - x_odd * sin, x_even * sin + x_odd * cos), dim=-1).flatten(-2)
