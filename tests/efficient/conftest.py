"""Fixtures of the efficient-attention tests: random ``q, k, v`` and the full attention to compare with."""

from __future__ import annotations

import pytest
import torch

import lib


def _qkv(B=2, H=3, T_q=23, T_k=23, d=8, dtype=torch.float64, requires_grad=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = [(B, H, T_q, d), (B, H, T_k, d), (B, H, T_k, d)]
    return [torch.randn(*s, generator=g, dtype=dtype).requires_grad_(requires_grad) for s in shapes]


def _full(q, k, v, mask=None, is_causal=False):
    if is_causal:  # queries are the last T_q of the T_k positions
        causal = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril(k.size(-2) - q.size(-2))
        mask = causal if mask is None else mask & causal
    return lib.scaled_dot_product_attention(q, k, v, mask)[0]


def _same_values_and_grads(out, ref, inputs):
    torch.testing.assert_close(out, ref)
    g = torch.randn_like(ref)
    for a, b in zip(torch.autograd.grad(out, inputs, g), torch.autograd.grad(ref, inputs, g)):
        torch.testing.assert_close(a, b)


@pytest.fixture
def qkv():
    """``qkv(B, H, T_q, T_k, d, dtype, requires_grad, seed) -> [q, k, v]``, float64 by default."""
    return _qkv


@pytest.fixture
def full():
    """``full(q, k, v, mask=None, is_causal=False)``: lib's explicit softmax attention, the reference."""
    return _full


@pytest.fixture
def assert_same_values_and_grads():
    """``(out, ref, inputs)``: equal values, and equal gradients for one random output gradient."""
    return _same_values_and_grads
