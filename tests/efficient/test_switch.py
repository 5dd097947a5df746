"""lib.efficient.switch: every variant stands in for full attention inside the models."""

import pytest
import torch

import lib
from lib.efficient import LinformerAttention, bigbird_mask, sliding_window_mask, use_attention
from lib.efficient.switch import memory_efficient_kernel


def test_use_attention_inside_models():
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


def test_linformer_attention_is_multi_head_attention_with_the_projection():
    torch.manual_seed(0)
    x = torch.randn(2, 20, 16)
    mha = LinformerAttention(16, 2, k=20, max_len=20).eval()  # k = T, pooling start: exact
    assert isinstance(mha, lib.MultiHeadAttention)
    out, weights = mha(x, x, x)
    assert weights is None  # no T × T weights to return
    plain = lib.MultiHeadAttention(16, 2).eval()
    plain.load_state_dict({name: p for name, p in mha.state_dict().items() if not name.startswith("kernel.")})
    torch.testing.assert_close(out, plain(x, x, x)[0], atol=1e-5, rtol=1e-5)


def test_use_attention_causal_lm_with_cache(tiny_lm_config):
    torch.manual_seed(0)
    lm = lib.DecoderOnlyLM(tiny_lm_config(vocab_size=12, n_layers=2)).eval()
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


def test_use_attention_sets_every_attention_layer(tiny_transformer_config):
    model = lib.Transformer(tiny_transformer_config(n_encoder_layers=2, n_decoder_layers=2))
    use_attention(model, "sliding_window", window=2)
    layers = lib.attention_layers(model)
    assert len(layers) == 2 + 2 * 2  # encoder self; decoder self and cross
    assert all(layer.kernel is not None for layer in layers.values())
    use_attention(model, "full")
    assert all(layer.kernel is None for layer in layers.values())


def test_use_attention_errors():
    layer = lib.EncoderLayer(16, 2, 32)
    with pytest.raises(ValueError, match="unknown"):
        use_attention(layer, "reformer")
    with pytest.raises(TypeError, match="sliding_window"):
        use_attention(layer, "sliding_window", widow=3)
    with pytest.raises(TypeError, match="full"):
        use_attention(layer, "full", window=3)
    with pytest.raises(ValueError, match="no MultiHeadAttention"):
        use_attention(torch.nn.Linear(2, 2), "full")
    with pytest.raises(TypeError, match="model"):
        use_attention("not a model", "full")


def _teacher_forced_and_cached(model, src, tgt):
    """Logits ``[B, T, V]`` of the whole target at once, and the same one token at a time with a cache."""
    with torch.no_grad():
        full = model(src, tgt)
        context, cache = model.generation_context(src), model.new_cache()
        steps = [model.next_logits(tgt[:, t : t + 1], context, cache) for t in range(tgt.size(1))]
    return full, torch.stack(steps, dim=1)


@pytest.mark.parametrize(
    "options",
    [
        dict(name="sliding_window", window=1),
        dict(name="bigbird", window=1, n_global=1, n_random=0),
        dict(name="bigbird", window=1, n_global=1, n_random=2, seed=4),  # random keys: earlier keys, fixed by position
    ],
)
@pytest.mark.parametrize("S, T", [(3, 6), (7, 4), (5, 12)])  # targets longer and shorter than the source
def test_sparse_patterns_leave_cross_attention_full(tiny_transformer_config, options, S, T):
    """A sparse pattern is over the positions of one sequence: self-attention only. Cross-attention
    keeps full attention (blockwise, exact), so teacher forcing and cached decoding agree."""
    torch.manual_seed(0)
    model = lib.Transformer(tiny_transformer_config(n_decoder_layers=2)).eval()
    src, tgt = torch.randint(3, 11, (2, S)), torch.randint(3, 11, (2, T))
    use_attention(model, **options)
    full, cached = _teacher_forced_and_cached(model, src, tgt)
    torch.testing.assert_close(cached, full, atol=1e-5, rtol=0)
    for layer in model.decoder_layers:
        assert layer.self_attn.kernel.func.__name__.startswith(options["name"])
        assert layer.cross_attn.kernel.func is memory_efficient_kernel
