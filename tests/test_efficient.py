"""lib.efficient: exact where exact, the right sparsity patterns, linear cost, clear errors."""

import pytest
import torch

import lib
from lib.efficient import (
    LinformerProjection,
    bigbird_mask,
    memory_efficient_attention,
    peak_tensor_memory,
    performer_attention,
    sliding_window_attention,
    sliding_window_mask,
)


def qkv(B=2, H=3, T_q=23, T_k=23, d=8, dtype=torch.float64, requires_grad=True, seed=0):
    g = torch.Generator().manual_seed(seed)
    shapes = [(B, H, T_q, d), (B, H, T_k, d), (B, H, T_k, d)]
    return [torch.randn(*s, generator=g, dtype=dtype).requires_grad_(requires_grad) for s in shapes]


def full(q, k, v, mask=None, is_causal=False):
    if is_causal:
        causal = torch.ones(q.size(-2), k.size(-2), dtype=torch.bool).tril(k.size(-2) - q.size(-2))
        mask = causal if mask is None else mask & causal
    return lib.scaled_dot_product_attention(q, k, v, mask)[0]


def assert_same_values_and_grads(out, ref, inputs):
    torch.testing.assert_close(out, ref)
    g = torch.randn_like(ref)
    for a, b in zip(torch.autograd.grad(out, inputs, g), torch.autograd.grad(ref, inputs, g)):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("block_size", [1, 5, 23, 128])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_memory_efficient_is_exact(block_size, is_causal, masked):
    q, k, v = qkv()
    mask = (torch.rand(2, 1, 23, 23, generator=torch.Generator().manual_seed(1)) > 0.4) if masked else None
    out = memory_efficient_attention(q, k, v, mask, is_causal, block_size=block_size)
    assert_same_values_and_grads(out, full(q, k, v, mask, is_causal), (q, k, v))


def test_memory_efficient_float32_within_1e5_and_cross_attention():
    q, k, v = qkv(T_q=7, T_k=40, dtype=torch.float32)
    for is_causal in (False, True):
        out = memory_efficient_attention(q, k, v, is_causal=is_causal, block_size=16)
        torch.testing.assert_close(out, full(q, k, v, None, is_causal), atol=1e-5, rtol=1e-5)


def test_memory_efficient_fully_masked_rows_are_zero_without_nan():
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


def test_memory_efficient_padding_mask_and_scale():
    q, k, v = qkv()
    tokens = torch.tensor([[5] * 20 + [0] * 3, [5] * 23])
    mask = lib.padding_mask(tokens, 0)
    out = memory_efficient_attention(q, k, v, mask, scale=0.3, block_size=6)
    ref = lib.scaled_dot_product_attention(q, k, v, mask, scale=0.3)[0]
    assert_same_values_and_grads(out, ref, (q, k, v))


def test_memory_grows_linearly_for_blockwise_and_quadratically_for_full():
    def peak(fn, T):
        q, k, v = qkv(B=1, H=1, T_q=T, T_k=T, d=16, dtype=torch.float32, requires_grad=False)
        return peak_tensor_memory(lambda: fn(q, k, v))

    blockwise = lambda q, k, v: memory_efficient_attention(q, k, v, block_size=64)
    window = lambda q, k, v: sliding_window_attention(q, k, v, window=16, block_size=64)
    explicit = lambda q, k, v: full(q, k, v)
    assert peak(explicit, 1024) / peak(explicit, 512) > 3.5
    assert peak(blockwise, 1024) / peak(blockwise, 512) < 2.2
    assert peak(window, 1024) / peak(window, 512) < 2.2
    assert peak(blockwise, 1024) < peak(explicit, 1024) / 5


def test_peak_tensor_memory_counts_a_matrix():
    x = torch.randn(100, 10)
    assert peak_tensor_memory(lambda: x @ x.T) == 100 * 100 * 4
    with pytest.raises(TypeError, match="fn"):
        peak_tensor_memory(3)


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
def test_sliding_window_attention_equals_masked_full(is_causal):
    q, k, v = qkv(T_q=37, T_k=37)
    pad = lib.padding_mask(torch.tensor([[1] * 30 + [0] * 7, [1] * 37]), 0)
    for window in (0, 3, 50):
        out = sliding_window_attention(q, k, v, window, pad, is_causal, block_size=8)
        ref = full(q, k, v, pad & sliding_window_mask(37, window), is_causal)
        assert_same_values_and_grads(out, ref, (q, k, v))


def test_performer_error_falls_with_features():
    q, k, v = qkv(B=1, H=2, T_q=64, T_k=64, d=16, requires_grad=False)
    q, k = 0.5 * q, 0.5 * k
    ref = full(q, k, v)

    def error(m):
        return sum(((performer_attention(q, k, v, m, seed=s) - ref).norm() / ref.norm()).item() for s in range(4)) / 4

    assert error(4096) < error(64) / 3
    assert error(4096) < 0.05


def test_performer_key_mask_and_errors():
    q, k, v = qkv(B=1, H=1, T_q=10, T_k=10, d=4, requires_grad=False)
    keys = torch.tensor([True] * 6 + [False] * 4)[None, None, None, :]
    out = performer_attention(q, k, v, 64, mask=keys)
    torch.testing.assert_close(out, performer_attention(q, k[..., :6, :], v[..., :6, :], 64))
    with pytest.raises(ValueError, match="key mask"):
        performer_attention(q, k, v, mask=lib.causal_mask(10))
    with pytest.raises(ValueError, match="n_features"):
        performer_attention(q, k, v, n_features=0)


def test_linformer_exact_at_full_rank_and_errors():
    q, k, v = qkv(T_q=16, T_k=16)
    proj = LinformerProjection(16, 16).double()  # pooling start: E = F = I at k = T
    torch.testing.assert_close(proj(q, k, v), full(q, k, v))
    small = LinformerProjection(4, 16)
    assert small(*qkv(T_q=16, T_k=16, dtype=torch.float32)).shape == (2, 3, 16, 8)
    with pytest.raises(ValueError, match="max_len"):
        small(*qkv(T_q=20, T_k=20, dtype=torch.float32))
    with pytest.raises(ValueError, match="causal"):
        small(*qkv(T_q=16, T_k=16, dtype=torch.float32), is_causal=True)
    with pytest.raises(ValueError, match="init"):
        LinformerProjection(4, 16, init="zeros")


def test_bad_input_errors():
    q, k, v = qkv(T_q=5, T_k=5)
    with pytest.raises(TypeError, match="bool"):
        memory_efficient_attention(q, k, v, torch.ones(5, 5))
    with pytest.raises(ValueError, match="does not broadcast"):
        memory_efficient_attention(q, k, v, torch.ones(4, 5, dtype=torch.bool))
    with pytest.raises(ValueError, match="d_k"):
        memory_efficient_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="block_size"):
        memory_efficient_attention(q, k, v, block_size=0)
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(5, -1)
    with pytest.raises(ValueError, match="n_global"):
        bigbird_mask(5, 1, 6, 0)
    with pytest.raises(TypeError, match="q must be a Tensor"):
        memory_efficient_attention([1.0], k, v)


# --- the switch: every variant inside MultiHeadAttention and the models -------------------------


def test_use_attention_inside_models():
    from lib.efficient import LinformerAttention, use_attention

    torch.manual_seed(0)
    layer = lib.EncoderLayer(16, 2, 32, dropout=0.0).eval()
    x = torch.randn(2, 20, 16)
    ref = layer(x)
    use_attention(layer, "memory_efficient", block_size=6)
    torch.testing.assert_close(layer(x), ref, atol=1e-5, rtol=1e-5)
    use_attention(layer, "sliding_window", window=3)
    use_attention(layer.self_attn, "full")
    windowed = layer(x, sliding_window_mask(20, 3))
    use_attention(layer, "sliding_window", window=3)
    torch.testing.assert_close(layer(x), windowed, atol=1e-5, rtol=1e-5)
    use_attention(layer, "bigbird", window=2, n_global=1, n_random=2)
    use_attention(layer, "full")
    bigbird = layer(x, bigbird_mask(20, 2, 1, 2))
    use_attention(layer, "bigbird", window=2, n_global=1, n_random=2)
    torch.testing.assert_close(layer(x), bigbird, atol=1e-5, rtol=1e-5)
    use_attention(layer, "performer", n_features=16)
    assert layer(x).shape == x.shape
    use_attention(layer, "linformer", k=5, max_len=20)
    assert sum(p.numel() for p in layer.self_attn.kernel.parameters()) == 2 * 5 * 20
    assert layer(x).shape == x.shape
    mha = LinformerAttention(16, 2, k=4, max_len=20)
    out, weights = mha(x, x, x)
    assert out.shape == x.shape and weights is None


def test_use_attention_causal_lm_with_cache():
    from lib.efficient import use_attention

    torch.manual_seed(0)
    lm = lib.DecoderOnlyLM(lib.LMConfig(vocab_size=12, d_model=16, n_heads=2, n_layers=2, dropout=0.0)).eval()
    tokens = torch.randint(3, 12, (2, 9))
    ref = lm(tokens)
    use_attention(lm, "memory_efficient", block_size=4)
    torch.testing.assert_close(lm(tokens), ref, atol=1e-5, rtol=1e-5)
    use_attention(lm, "sliding_window", window=2)
    cached = lm.generate(tokens[:, :3], 5, use_cache=True)
    assert torch.equal(cached, lm.generate(tokens[:, :3], 5, use_cache=False))
    use_attention(lm, "performer")
    with pytest.raises(ValueError, match="non-causal"):
        lm(tokens)


def test_use_attention_errors():
    from lib.efficient import use_attention

    layer = lib.EncoderLayer(16, 2, 32)
    with pytest.raises(ValueError, match="unknown"):
        use_attention(layer, "reformer")
    with pytest.raises(TypeError, match="sliding_window"):
        use_attention(layer, "sliding_window", widow=3)
    with pytest.raises(TypeError, match="full"):
        use_attention(layer, "full", window=3)
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        use_attention(torch.nn.Linear(2, 2), "full")


def test_cpu_seconds_ranks_work():
    from lib.efficient import cpu_seconds

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, b = torch.randn(64, 64), torch.randn(256, 256)
        t = cpu_seconds({"small": lambda: a @ a, "large": lambda: b @ b}, repeats=3, min_seconds=0.002)
        assert t["large"] > 4 * t["small"] > 0
    finally:
        torch.set_num_threads(threads)
    with pytest.raises(ValueError, match="set_num_threads"):
        torch.set_num_threads(2)
        try:
            cpu_seconds({"x": lambda: None})
        finally:
            torch.set_num_threads(threads)
