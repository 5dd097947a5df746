"""The switches chapters 4–8 build on: MultiHeadAttention.kernel, layer options,
LMConfig, and an import without side effects."""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from lib import (
    DecoderLayer,
    DecoderOnlyLM,
    EncoderLayer,
    LMConfig,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
)


def torch_kernel(q, k, v, mask, is_causal, scale):
    """The book's mask meaning is F.scaled_dot_product_attention's: pass everything through."""
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=is_causal, scale=scale)


def set_kernel(model, kernel):
    for m in model.modules():
        if isinstance(m, MultiHeadAttention):
            m.kernel = kernel


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masking", ["none", "padding", "causal", "is_causal"])
def test_a_kernel_replaces_the_attention_computation(masking, need_weights):
    torch.manual_seed(0)
    mha, x = MultiHeadAttention(32, 4).eval(), torch.randn(2, 6, 32)
    mask = {
        "none": None,
        "padding": padding_mask(torch.tensor([[1, 2, 3, 4, 5, 6], [1, 2, 3, 0, 0, 0]]), 0),
        "causal": causal_mask(6),
        "is_causal": None,
    }[masking]
    is_causal = masking == "is_causal"
    expected, _ = mha(x, x, x, mask, need_weights=need_weights, is_causal=is_causal)
    calls = []

    def kernel(*args):
        calls.append(args)
        return torch_kernel(*args)

    mha.kernel = kernel
    out, weights = mha(x, x, x, mask, need_weights=need_weights, is_causal=is_causal)
    assert len(calls) == 1 and weights is None
    q, k, v, passed_mask, passed_causal, scale = calls[0]
    assert q.shape == k.shape == v.shape == (2, 4, 6, 8) and scale == pytest.approx(8**-0.5)
    assert passed_causal == (masking == "is_causal") and (passed_mask is None) == (masking in ("none", "is_causal"))
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=0)


def test_a_kernel_in_every_layer_of_a_model_with_a_cache_gives_the_same_tokens():
    torch.manual_seed(0)
    config = TransformerConfig(
        20, 20, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, position="rotary"
    )
    model = Transformer(config).eval()
    src = torch.randint(3, 20, (3, 7))
    from lib import greedy_decode

    expected = greedy_decode(model, src, 8, eos_id=None)
    logits = model(src, src)
    set_kernel(model, torch_kernel)
    torch.testing.assert_close(model(src, src), logits, atol=1e-5, rtol=0)
    assert torch.equal(greedy_decode(model, src, 8, eos_id=None), expected)


def test_a_kernel_refuses_relative_positions():
    model = DecoderOnlyLM(LMConfig(10, 16, 2, 1, position="relative"))
    set_kernel(model, torch_kernel)
    with pytest.raises(ValueError, match="relative"):
        model(torch.ones(1, 4, dtype=torch.long))


@pytest.mark.parametrize("layer_type", [EncoderLayer, DecoderLayer])
def test_layer_options_reach_the_modules(layer_type):
    layer = layer_type(16, 2, 32, activation="gelu", layer_norm_eps=1e-6)
    assert layer.ff.activation is F.gelu and layer.norm1.eps == 1e-6 and layer.norm2.eps == 1e-6
    config = TransformerConfig(
        10,
        10,
        d_model=16,
        n_heads=2,
        n_encoder_layers=1,
        n_decoder_layers=1,
        d_ff=32,
        activation="gelu",
        layer_norm_eps=1e-6,
        norm_first=True,
    )
    model = Transformer(config)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert len(norms) == 7 and all(n.eps == 1e-6 for n in norms)
    with pytest.raises(ValueError, match="layer_norm_eps=0"):
        layer_type(16, 2, 32, layer_norm_eps=0)


def test_lm_config_is_validated_once_and_required():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3"):
        LMConfig(10, d_model=10, n_heads=3)
    with pytest.raises(TypeError, match=r"n_layers must be an int, got True"):
        LMConfig(10, n_layers=True)
    with pytest.raises(TypeError, match=r"config must be an LMConfig"):
        DecoderOnlyLM(10)
    lm = DecoderOnlyLM(LMConfig(10, 16, 2, 1, d_ff=24))
    assert lm.layers[0].ff.linear1.out_features == 24


def test_import_lib_leaves_matplotlib_alone():
    code = (
        "import matplotlib as m; before = dict(m.rcParams); import lib; "
        "after = dict(m.rcParams); print(before == after)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
