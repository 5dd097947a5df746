"""lib.efficient.blockwise: the online softmax is exact attention, values and gradients."""

import pytest
import torch

import lib
from lib.efficient import memory_efficient_attention


@pytest.mark.parametrize("block_size", [1, 5, 23, 128])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_memory_efficient_is_exact(block_size, is_causal, masked, qkv, full, assert_same_values_and_grads):
    q, k, v = qkv()
    mask = (torch.rand(2, 1, 23, 23, generator=torch.Generator().manual_seed(1)) > 0.4) if masked else None
    out = memory_efficient_attention(q, k, v, mask, is_causal, block_size=block_size)
    assert_same_values_and_grads(out, full(q, k, v, mask, is_causal), (q, k, v))


def test_memory_efficient_float32_within_1e5_and_cross_attention(qkv, full):
    q, k, v = qkv(T_q=7, T_k=40, dtype=torch.float32)
    for is_causal in (False, True):
        out = memory_efficient_attention(q, k, v, is_causal=is_causal, block_size=16)
        torch.testing.assert_close(out, full(q, k, v, None, is_causal), atol=1e-5, rtol=1e-5)


def test_memory_efficient_fully_masked_rows_are_zero_without_nan(qkv, full, assert_same_values_and_grads):
    q, k, v = qkv(T_q=6, T_k=9)
    mask = torch.ones(6, 9, dtype=torch.bool)
    mask[2] = False
    out = memory_efficient_attention(q, k, v, mask, block_size=4)
    assert torch.all(out[..., 2, :] == 0)
    out.sum().backward()
    assert all(torch.isfinite(x.grad).all() for x in (q, k, v))
    assert_same_values_and_grads(
        memory_efficient_attention(q, k, v, mask, block_size=4), full(q, k, v, mask), (q, k, v)
    )


def test_memory_efficient_padding_mask_and_scale(qkv, assert_same_values_and_grads):
    q, k, v = qkv()
    tokens = torch.tensor([[5] * 20 + [0] * 3, [5] * 23])
    mask = lib.padding_mask(tokens, 0)
    out = memory_efficient_attention(q, k, v, mask, scale=0.3, block_size=6)
    ref = lib.scaled_dot_product_attention(q, k, v, mask, scale=0.3)[0]
    assert_same_values_and_grads(out, ref, (q, k, v))
