"""The fast paths: the fused kernel is taken when it should be, recognises the causal mask,
skips the fully-masked-row fix-up when no row needs it, and decoding feeds one token per step."""

from unittest import mock

import pytest
import torch
import torch.nn.functional as F

import lib.model.attention
from lib import DecoderOnlyLM, LMConfig, MultiHeadAttention, Transformer, TransformerConfig, causal_mask, padding_mask
from lib.model.masks import is_causal_mask


@pytest.fixture
def sdpa_calls():
    """Record the keyword arguments of every call of F.scaled_dot_product_attention made by lib."""
    calls = []
    real = F.scaled_dot_product_attention

    def spy(q, k, v, **kwargs):
        calls.append(kwargs)
        return real(q, k, v, **kwargs)

    with mock.patch.object(lib.model.attention.F, "scaled_dot_product_attention", spy):
        yield calls


def make_mha(seed=0, d_model=32, n_heads=4):
    torch.manual_seed(seed)
    return MultiHeadAttention(d_model, n_heads).eval()


def test_is_causal_mask():
    assert is_causal_mask(causal_mask(5))
    assert is_causal_mask(causal_mask(5)[None, None])
    assert is_causal_mask(causal_mask(1))
    one_off = causal_mask(5).clone()
    one_off[4, 0] = False
    assert not is_causal_mask(one_off)
    assert not is_causal_mask(torch.ones(5, 5, dtype=torch.bool).tril(-1))  # no diagonal
    assert not is_causal_mask(torch.ones(4, 5, dtype=torch.bool).tril())  # not square
    assert not is_causal_mask(causal_mask(5).expand(2, 1, 5, 5))  # one per batch row
    assert not is_causal_mask(torch.ones(2, 1, 1, 5, dtype=torch.bool))  # a padding mask


def test_a_causal_mask_and_is_causal_give_the_same_attention(sdpa_calls):
    mha, x = make_mha(), torch.randn(3, 7, 32)
    out_mask, _ = mha(x, x, x, causal_mask(7), need_weights=False)
    out_flag, _ = mha(x, x, x, need_weights=False, is_causal=True)
    assert [c.get("is_causal", False) for c in sdpa_calls] == [False, True]  # the flag lets the kernel skip
    torch.testing.assert_close(out_mask, out_flag, atol=1e-5, rtol=0)
    out_explicit, weights = mha(x, x, x, causal_mask(7), need_weights=True)  # no kernel call
    assert len(sdpa_calls) == 2
    torch.testing.assert_close(out_explicit, out_flag, atol=1e-5, rtol=0)
    assert torch.all(weights.triu(1) == 0)


def test_causal_mask_with_padding_keeps_the_mask(sdpa_calls):
    mha, x = make_mha(), torch.randn(2, 6, 32)
    tokens = torch.tensor([[5, 6, 7, 8, 9, 4], [5, 6, 7, 0, 0, 0]])
    mask = causal_mask(6) & padding_mask(tokens, 0)  # [2, 1, 6, 6]
    out, _ = mha(x, x, x, mask, need_weights=False)
    assert sdpa_calls[0]["attn_mask"] is not None and not sdpa_calls[0].get("is_causal")
    torch.testing.assert_close(out, mha(x, x, x, mask)[0], atol=1e-5, rtol=0)


def test_padding_mask_without_empty_rows_reaches_the_kernel_unchanged(sdpa_calls):
    mha, x = make_mha(), torch.randn(2, 5, 32)
    mask = padding_mask(torch.tensor([[3, 4, 5, 6, 7], [3, 4, 5, 0, 0]]), 0)
    out, _ = mha(x, x, x, mask, need_weights=False)
    assert torch.equal(sdpa_calls[0]["attn_mask"], mask)  # no row needed a fix-up
    torch.testing.assert_close(out, mha(x, x, x, mask)[0], atol=1e-5, rtol=0)


def test_fully_masked_rows_still_give_zeros_and_finite_gradients():
    mha = make_mha().train()
    x = torch.randn(2, 4, 32, requires_grad=True)
    mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    mask[1, :, 2] = False  # query 2 of row 1 sees nothing
    out, _ = mha(x, x, x, mask, need_weights=False)
    out_explicit, _ = mha(x, x, x, mask)
    torch.testing.assert_close(out, out_explicit, atol=1e-5, rtol=0)
    expected_row = mha.out_proj.bias.expand(32)  # zero attention -> bias only
    torch.testing.assert_close(out[1, 2], expected_row)
    out.sum().backward()
    assert torch.isfinite(x.grad).all()


def test_models_train_and_decode_through_the_fused_kernel(sdpa_calls):
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0))
    lm(torch.randint(3, 20, (2, 6))).sum().backward()
    assert len(sdpa_calls) == 2 and all(c.get("is_causal") for c in sdpa_calls)

    sdpa_calls.clear()
    config = TransformerConfig(
        20, 20, d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=1, d_ff=64, dropout=0.0
    )
    model = Transformer(config)
    src, tgt = torch.randint(3, 20, (2, 5)), torch.randint(3, 20, (2, 6))
    model(src, tgt, tgt_mask=causal_mask(6))  # an explicit causal mask
    encoder_self, decoder_self, cross = sdpa_calls
    assert decoder_self.get("is_causal") and decoder_self.get("attn_mask") is None
    assert encoder_self.get("attn_mask") is not None and cross.get("attn_mask") is not None


def test_decoding_feeds_one_token_per_step_with_the_cache():
    torch.manual_seed(0)
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0)).eval()
    prompt = torch.randint(3, 20, (2, 5))
    lengths = []
    real_forward = lm.forward

    def forward(tokens, cache=None):
        lengths.append((tokens.size(1), cache is not None))
        return real_forward(tokens, cache)

    with mock.patch.object(lm, "forward", forward):
        cached = lm.generate(prompt, 4)
        assert lengths == [(5, True), (1, True), (1, True), (1, True)]
        lengths.clear()
        uncached = lm.generate(prompt, 4, use_cache=False)
        assert lengths == [(5, False), (6, False), (7, False), (8, False)]
    assert torch.equal(cached, uncached)


def test_causal_mask_recognition_compares_each_mask_object_once(monkeypatch):
    import lib.model.masks

    compared = []
    real_equal = torch.equal
    monkeypatch.setattr(lib.model.masks.torch, "equal", lambda a, b: compared.append(1) or real_equal(a, b))
    config = TransformerConfig(
        20, 20, d_model=32, n_heads=4, n_encoder_layers=1, n_decoder_layers=3, d_ff=64, dropout=0.0
    )
    model = Transformer(config)
    src, tgt = torch.randint(3, 20, (2, 5)), torch.randint(3, 20, (2, 6))
    mask = causal_mask(6)
    model(src, tgt, tgt_mask=mask)
    assert len(compared) == 1  # three decoder layers, one comparison
    mask[5, 5] = False  # modified in place: asked again, and the answer changes
    assert not is_causal_mask(mask) and len(compared) == 2


def test_causal_mask_recognition_in_inference_mode():
    """Inference-mode tensors have no version counter: recognised all the same, just not remembered."""
    mha, x = make_mha().eval(), torch.randn(2, 5, 32)
    with torch.inference_mode():
        mask = causal_mask(5)
        assert is_causal_mask(mask) and not is_causal_mask(torch.ones(5, 5, dtype=torch.bool))
        torch.testing.assert_close(mha(x, x, x, mask, need_weights=False)[0], mha(x, x, x, is_causal=True)[0])
