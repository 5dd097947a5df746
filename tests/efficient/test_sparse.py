"""lib.efficient.sparse: the window and BigBird patterns, and the O(T·w) window attention."""

import pytest
import torch

import lib
from lib.efficient import bigbird_mask, sliding_window_attention, sliding_window_mask


def test_sliding_window_mask_pattern():
    m = sliding_window_mask(6, 1)
    i, j = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    assert torch.equal(m, (i - j).abs() <= 1)
    assert sliding_window_mask(4, 0).equal(torch.eye(4, dtype=torch.bool))
    assert sliding_window_mask(4, 10).all()


def test_bigbird_mask_pattern():
    T, w, g, r = 20, 2, 2, 3
    m = bigbird_mask(T, w, g, r, seed=0)
    assert m.dtype == torch.bool and m.shape == (T, T)
    assert m[:g].all() and m[:, :g].all()  # global rows and columns
    assert (m | ~sliding_window_mask(T, w)).all()  # contains the window
    base = sliding_window_mask(T, w)
    base[:g], base[:, :g] = True, True
    extra = (m & ~base).sum(-1)
    assert torch.all(extra[g:] == r)  # r random keys per row
    assert torch.equal(m, bigbird_mask(T, w, g, r, seed=0))
    assert not torch.equal(m, bigbird_mask(T, w, g, r, seed=1))


@pytest.mark.parametrize("is_causal", [False, True])
def test_sliding_window_attention_equals_masked_full(is_causal, qkv, full, assert_same_values_and_grads):
    q, k, v = qkv(T_q=37, T_k=37)
    pad = lib.padding_mask(torch.tensor([[1] * 30 + [0] * 7, [1] * 37]), 0)
    for window in (0, 3, 50):
        out = sliding_window_attention(q, k, v, window, pad, is_causal, block_size=8)
        ref = full(q, k, v, pad & sliding_window_mask(37, window), is_causal)
        assert_same_values_and_grads(out, ref, (q, k, v))


def test_bigbird_random_keys_depend_on_the_length():
    """As `use_attention` says: without random keys the pattern of a prefix is the prefix of the
    pattern (so a decoder may grow its output step by step); with them, a row's random keys are drawn
    for the whole length, and the prefix of a longer pattern is not the pattern of the prefix."""
    assert all(torch.equal(bigbird_mask(12, 1, 1, 0)[:t, :t], bigbird_mask(t, 1, 1, 0)) for t in range(2, 12))
    assert any(not torch.equal(bigbird_mask(12, 1, 1, 2)[:t, :t], bigbird_mask(t, 1, 1, 2)) for t in range(4, 12))
