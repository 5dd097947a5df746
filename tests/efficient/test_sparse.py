"""lib.efficient.sparse: the window and BigBird patterns, and the O(T·w) window attention."""

import pytest
import torch

import lib
from lib.efficient import bigbird_mask, sliding_window_attention, sliding_window_mask, use_attention


def test_sliding_window_mask_pattern():
    m = sliding_window_mask(6, 1)
    i, j = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    assert torch.equal(m, (i - j).abs() <= 1)
    assert sliding_window_mask(4, 0).equal(torch.eye(4, dtype=torch.bool))
    assert sliding_window_mask(4, 10).all()


def test_bigbird_mask_pattern():
    T, w, g, r = 30, 2, 3, 4
    m = bigbird_mask(T, w, g, r, seed=5)
    assert m.dtype == torch.bool and m.shape == (T, T)
    assert m[:g].all() and m[:, :g].all()  # global rows and columns
    assert (m | ~sliding_window_mask(T, w)).all()  # contains the window
    base = sliding_window_mask(T, w)
    base[:g], base[:, :g] = True, True
    random_keys = m & ~base
    i = torch.arange(T)
    # row i: min(r, max(0, i − w − g)) random keys, all earlier keys g ≤ j < i − w
    assert torch.equal(random_keys.sum(-1), (i - w - g).clamp(0, r) * (i >= g))
    assert not random_keys.triu().any()
    chosen = {frozenset(random_keys[t].nonzero().flatten().tolist()) for t in range(g + w + r + 1, T)}
    assert len(chosen) > (T - g - w - r - 1) // 2  # the rows draw different keys
    assert torch.equal(m, bigbird_mask(T, w, g, r, seed=5))
    assert not torch.equal(m, bigbird_mask(T, w, g, r, seed=6))


@pytest.mark.parametrize("is_causal", [False, True])
def test_sliding_window_attention_equals_masked_full(is_causal, qkv, full, assert_same_values_and_grads):
    q, k, v = qkv(T_q=37, T_k=37)
    pad = lib.padding_mask(torch.tensor([[1] * 30 + [0] * 7, [1] * 37]), 0)
    for window in (0, 3, 50):
        out = sliding_window_attention(q, k, v, window, pad, is_causal, block_size=8)
        ref = full(q, k, v, pad & sliding_window_mask(37, window), is_causal)
        assert_same_values_and_grads(out, ref, (q, k, v))


@pytest.mark.parametrize(
    "window, n_global, n_random", [(0, 0, 1), (1, 1, 2), (2, 0, 3), (0, 3, 5), (3, 2, 0), (1, 0, 50)]
)
def test_bigbird_pattern_of_a_prefix_is_the_prefix_of_the_pattern(window, n_global, n_random):
    """A row's random keys depend on its position and the seed, not on the length: a decoder that
    grows its output step by step sees the rows teacher forcing sees."""
    for seed in (0, 7, 2**64 - 3, 2**40 + 1):  # seeds are ints in [0, 2**64) (check_seed)
        m = bigbird_mask(40, window, n_global, n_random, seed)
        for t in range(max(1, n_global), 41):
            assert torch.equal(m[:t, :t], bigbird_mask(t, window, n_global, n_random, seed)), (seed, t)


def test_bigbird_random_keys_keep_teacher_forcing_and_cached_decoding_equal(tiny_lm_config):
    """With random keys, an LM decoded one token at a time with its cache gives the logits of
    teacher forcing (the rows of a prefix's pattern are the rows of the whole pattern)."""
    torch.manual_seed(0)
    lm = lib.DecoderOnlyLM(tiny_lm_config(vocab_size=12, n_layers=2)).eval()
    use_attention(lm, "bigbird", window=1, n_global=1, n_random=2, seed=3)
    tokens = torch.randint(3, 12, (2, 16))
    with torch.no_grad():
        full = lm(tokens)
        cache = lm.new_cache()
        steps = [lm(tokens[:, :4], cache=cache)] + [lm(tokens[:, t : t + 1], cache=cache) for t in range(4, 16)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)
