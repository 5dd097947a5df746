"""Masks do what they promise: no peeking ahead, no attending to padding, never NaN."""

import pytest
import torch
from small_models import small_config as shared_config

from lib import (
    DecoderOnlyLM,
    LMConfig,
    MultiHeadAttention,
    Transformer,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)

POSITIONS = ["sinusoidal", "learned", "relative", "rotary", "none"]


def small_config(position="sinusoidal", norm_first=False, **kw):
    return shared_config(src_vocab_size=16, tgt_vocab_size=16, position=position, norm_first=norm_first, **kw)


def test_mask_helpers():
    assert causal_mask(3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    tokens = torch.tensor([[5, 6, 0], [7, 0, 0]])
    mask = padding_mask(tokens, pad_id=0)
    assert mask.shape == (2, 1, 1, 3) and mask.dtype == torch.bool
    assert mask[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]


@pytest.mark.parametrize("position", POSITIONS)
def test_future_tokens_never_change_earlier_outputs(position):
    torch.manual_seed(0)
    model = Transformer(small_config(position)).eval()
    lm = DecoderOnlyLM(LMConfig(16, 32, 4, 2, dropout=0.0, position=position)).eval()
    src = torch.randint(3, 16, (2, 6))
    tgt = torch.randint(3, 16, (2, 8))
    changed = tgt.clone()
    changed[:, 5:] = torch.randint(3, 16, (2, 3))
    with torch.no_grad():
        a, b = model(src, tgt), model(src, changed)
        c, d = lm(tgt), lm(changed)
    torch.testing.assert_close(a[:, :5], b[:, :5], atol=1e-5, rtol=0)
    torch.testing.assert_close(c[:, :5], d[:, :5], atol=1e-5, rtol=0)
    assert not torch.allclose(a[:, 5:], b[:, 5:])  # the later outputs do see them


@pytest.mark.parametrize("position", POSITIONS)
def test_padding_never_changes_non_pad_outputs(position):
    torch.manual_seed(0)
    model = Transformer(small_config(position)).eval()
    src = torch.randint(3, 16, (1, 5))
    padded = torch.cat([src, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    tgt = torch.randint(3, 16, (1, 4))
    with torch.no_grad():
        torch.testing.assert_close(model.encode(padded)[:, :5], model.encode(src), atol=1e-5, rtol=0)
        torch.testing.assert_close(model(padded, tgt), model(src, tgt), atol=1e-5, rtol=0)


@pytest.mark.parametrize("need_weights", [True, False])
def test_fully_masked_rows_give_zeros_and_finite_gradients(need_weights):
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2)
    x = torch.randn(2, 4, 16, requires_grad=True)
    mask = torch.ones(2, 1, 4, 4, dtype=torch.bool)
    mask[0, :, 1] = False  # query 1 of example 0 may attend to nothing
    out, weights = mha(x, x, x, mask, need_weights=need_weights)
    out.sum().backward()
    assert torch.isfinite(out).all() and torch.isfinite(x.grad).all()
    expected_row = mha.out_proj.bias  # zero attention output, then W^O and its bias
    torch.testing.assert_close(out[0, 1], expected_row.detach(), atol=1e-6, rtol=0)
    if need_weights:
        assert (weights[0, :, 1] == 0).all()

    q = torch.randn(1, 3, 8, requires_grad=True)
    all_masked = torch.zeros(3, 3, dtype=torch.bool)
    z, w = scaled_dot_product_attention(q, q, q, all_masked)
    z.sum().backward()
    assert (z == 0).all() and (w == 0).all() and torch.isfinite(q.grad).all()


def test_masked_keys_get_exactly_zero_weight():
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, 5, 4) * 30, torch.randn(1, 2, 5, 4) * 30, torch.randn(1, 2, 5, 4)
    _, w = scaled_dot_product_attention(q, k, v, causal_mask(5))
    assert (w[..., ~causal_mask(5)] == 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(1, 2, 5))


@pytest.mark.parametrize("position", POSITIONS)
def test_a_target_padding_mask_keeps_the_look_ahead_mask(position):
    """Regression: a padding mask passed as tgt_mask replaced the look-ahead mask (as in
    nn.Transformer), so the decoder silently saw the future. Now it restricts it further."""
    torch.manual_seed(0)
    model = Transformer(small_config(position)).eval()
    src = torch.randint(3, 16, (2, 6))
    tgt = torch.tensor([[1, 5, 6, 7, 8, 9, 10, 11], [1, 5, 6, 7, 8, 0, 0, 0]])
    changed = tgt.clone()
    changed[0, 5:] = torch.tensor([12, 13, 14])
    tgt_mask = padding_mask(tgt, 0)
    with torch.no_grad():
        a, b = model(src, tgt, tgt_mask=tgt_mask), model(src, changed, tgt_mask=tgt_mask)
        causal_only = model(src, tgt)
    torch.testing.assert_close(a[0, :5], b[0, :5], atol=1e-5, rtol=0)  # no peeking ahead
    torch.testing.assert_close(a[0], causal_only[0], atol=1e-5, rtol=0)  # row 0 has no padding
    assert not torch.allclose(a[1, 5:], causal_only[1, 5:])  # row 1's padding keys are masked


def test_a_3d_mask_is_refused_not_broadcast_over_the_heads():
    """``[B, T, T]`` would broadcast as ``[H, T, T]`` (one mask per head, silently wrong when B = H), and
    nn.MultiheadAttention reads 3-D as ``[B·H, T, T]``: lib refuses it and says to pass ``[B, 1, T_q, T_k]``."""
    B = H = 2
    mha, x = MultiHeadAttention(16, H), torch.randn(B, 5, 16)
    per_example = torch.ones(B, 5, 5, dtype=torch.bool).tril()
    per_example[1] = True  # row 1 sees everything, row 0 is causal
    for call in (
        lambda: mha(x, x, x, per_example),
        lambda: scaled_dot_product_attention(*torch.randn(3, B, H, 5, 8), per_example),
    ):
        with pytest.raises(ValueError, match=r"mask of shape \(2, 5, 5\) is 3-D.*\[B, 1, T_q, T_k\]"):
            call()
    out, _ = mha(x, x, x, per_example[:, None])  # the way to say it: one mask per example
    torch.testing.assert_close(out[0], mha(x[:1], x[:1], x[:1], is_causal=True)[0][0])
    torch.testing.assert_close(out[1], mha(x[1:], x[1:], x[1:])[0][0])
