"""Bad input to lib.efficient: TypeError for a wrong type, ValueError for a wrong value (lib.model.checks)."""

import pytest
import torch

from lib.efficient import (
    LinformerProjection,
    bigbird_mask,
    memory_efficient_attention,
    orthogonal_features,
    performer_attention,
    sliding_window_attention,
    sliding_window_mask,
)


def test_tensors_and_masks(qkv):
    q, k, v = qkv(T_q=5, T_k=5)
    with pytest.raises(TypeError, match="bool"):
        memory_efficient_attention(q, k, v, torch.ones(5, 5))
    with pytest.raises(TypeError, match="mask must be a Tensor"):
        memory_efficient_attention(q, k, v, [[True] * 5] * 5)
    with pytest.raises(ValueError, match="does not broadcast"):
        memory_efficient_attention(q, k, v, torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="d_k"):
        memory_efficient_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="T_k"):
        memory_efficient_attention(q, k, v[..., :4, :])
    with pytest.raises(TypeError, match="q must be a Tensor"):
        memory_efficient_attention([1.0], k, v)
    with pytest.raises(ValueError, match="self-attention"):
        sliding_window_attention(q, k[..., :4, :], v[..., :4, :], 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda q, k, v, n: memory_efficient_attention(q, k, v, block_size=n),
        lambda q, k, v, n: sliding_window_attention(q, k, v, window=n),
        lambda q, k, v, n: performer_attention(q, k, v, n_features=n),
        lambda q, k, v, n: sliding_window_mask(n, 1),
        lambda q, k, v, n: bigbird_mask(8, 1, n, 0),
        lambda q, k, v, n: orthogonal_features(n, 4),
        lambda q, k, v, n: LinformerProjection(n, 16),
        lambda q, k, v, n: LinformerProjection(2, n),
    ],
)
def test_counts_are_ints_not_floats_or_bools(call, qkv):
    q, k, v = qkv(T_q=5, T_k=5, requires_grad=False)
    for wrong_type in (2.5, True, "3"):
        with pytest.raises(TypeError, match="must be an int"):
            call(q, k, v, wrong_type)
    with pytest.raises(ValueError, match="must be"):
        call(q, k, v, -1)


def test_values_out_of_range(qkv):
    q, k, v = qkv(T_q=5, T_k=5, requires_grad=False)
    with pytest.raises(ValueError, match="block_size=0"):
        memory_efficient_attention(q, k, v, block_size=0)
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(5, -1)
    with pytest.raises(ValueError, match="n_global"):
        bigbird_mask(5, 1, 6, 0)
    with pytest.raises(ValueError, match="scale"):
        memory_efficient_attention(q, k, v, scale=0.0)
    with pytest.raises(TypeError, match="scale"):
        performer_attention(q, k, v, scale="0.5")
