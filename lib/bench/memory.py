"""Peak memory of one attention forward pass: the explicit version against the fused kernel.

Measured with :func:`lib.efficient.peak_tensor_memory` (re-exported here), the one peak-memory meter
of ``lib``: it counts the bytes of every tensor the pass creates, on any device, deterministically.
The explicit version holds the ``T × T`` scores and weights of every head; the fused kernel hands
back only its output (and a log-sum-exp per query), so what it counts grows as ``T``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from ..efficient.memory import peak_tensor_memory
from ..model.attention import scaled_dot_product_attention
from ..model.checks import check_choice


def attend(method: str, q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """One attention forward pass: ``"explicit"`` (lib's written-out version) or ``"fused"``
    (PyTorch's kernel)."""
    check_choice("method", method, ("explicit", "fused"))
    if method == "explicit":
        return scaled_dot_product_attention(q, k, v)[0]
    return F.scaled_dot_product_attention(q, k, v)


def random_qkv(B: int, H: int, T: int, d_head: int, device) -> tuple[Tensor, Tensor, Tensor]:
    return tuple(torch.randn(B, H, T, d_head, device=device) for _ in range(3))


def peak_memory(method: str, B: int, H: int, T: int, d_head: int, device: torch.device | str = "cpu") -> float:
    """Bytes that one attention forward pass (without gradients) holds at its peak, beyond its inputs."""
    check_choice("method", method, ("explicit", "fused"))
    q, k, v = random_qkv(B, H, T, d_head, device)
    with torch.no_grad():
        return float(peak_tensor_memory(lambda: attend(method, q, k, v)))


def peak_memories(
    points: list[tuple[str, int]], B: int, H: int, d_head: int, device: torch.device | str = "cpu"
) -> list[float]:
    """:func:`peak_memory` of each ``(method, T)``."""
    return [peak_memory(method, B, H, T, d_head, device) for method, T in points]
