"""`MultiHeadAttention(scale=...)`: the factor on q·k before the softmax (chapter 3, scaling)."""

from __future__ import annotations

import math

import pytest
import torch

import lib
from lib import MultiHeadAttention, RelativeMultiHeadAttention, RotaryEmbedding

B, T, D, H = 2, 5, 16, 2
D_HEAD = D // H


def _mha(**kw) -> MultiHeadAttention:
    torch.manual_seed(0)
    return MultiHeadAttention(D, H, **kw).eval()


def _by_hand(mha: MultiHeadAttention, x: torch.Tensor, scale: float) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ · scale) V per head, then W^O, written out."""
    q, k, v = (mha.split_heads(proj(x)) for proj in (mha.q_proj, mha.k_proj, mha.v_proj))
    weights = ((q @ k.transpose(-2, -1)) * scale).softmax(dim=-1)
    return mha.out_proj(mha.merge_heads(weights @ v)), weights


def test_default_scale_is_one_over_sqrt_d_head_on_both_paths() -> None:
    x = torch.randn(B, T, D)
    default, explicit_scale = _mha(), _mha(scale=1 / math.sqrt(D_HEAD))
    assert default.scale == pytest.approx(1 / math.sqrt(D_HEAD))
    for need_weights in (True, False):
        out_default, _ = default(x, x, x, need_weights=need_weights)
        out_scaled, _ = explicit_scale(x, x, x, need_weights=need_weights)
        torch.testing.assert_close(out_default, out_scaled, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(default(x, x, x)[0], _by_hand(default, x, 1 / math.sqrt(D_HEAD))[0])


@pytest.mark.parametrize("scale", [1.0, 0.05, 3])
def test_custom_scale_explicit_and_fused_paths_agree_with_the_equation(scale: float) -> None:
    x = torch.randn(B, T, D)
    mha = _mha(scale=scale)
    expected_out, expected_weights = _by_hand(mha, x, scale)
    out, weights = mha(x, x, x, need_weights=True)
    torch.testing.assert_close(out, expected_out)
    torch.testing.assert_close(weights, expected_weights)
    fused, _ = mha(x, x, x, need_weights=False)
    torch.testing.assert_close(fused, expected_out, atol=1e-5, rtol=1e-5)
    # with a mask and causally, the fused path still uses the scale
    mask = lib.padding_mask(torch.tensor([[3, 3, 3, 0, 0], [3, 3, 3, 3, 3]]), pad_id=0)
    for kw in ({"mask": mask}, {"is_causal": True}):
        torch.testing.assert_close(
            mha(x, x, x, need_weights=False, **kw)[0], mha(x, x, x, need_weights=True, **kw)[0], atol=1e-5, rtol=1e-5
        )


def test_unscaled_weights_are_sharper_than_scaled() -> None:
    x = torch.randn(B, T, D)
    _, scaled = _mha()(x, x, x)
    _, unscaled = _mha(scale=1.0)(x, x, x)
    assert unscaled.max(dim=-1).values.mean() > scaled.max(dim=-1).values.mean()


def test_scale_reaches_rotary_and_relative_positions() -> None:
    x = torch.randn(B, T, D)
    torch.manual_seed(0)
    rotary = RotaryEmbedding(D_HEAD)
    a = MultiHeadAttention(D, H, rotary=rotary, scale=1.0).eval()
    torch.testing.assert_close(a(x, x, x, need_weights=False)[0], a(x, x, x)[0], atol=1e-5, rtol=1e-5)

    torch.manual_seed(0)
    rel_default = RelativeMultiHeadAttention(D, H, max_distance=4).eval()
    torch.manual_seed(0)
    rel_same = RelativeMultiHeadAttention(D, H, max_distance=4, scale=1 / math.sqrt(D_HEAD)).eval()
    torch.manual_seed(0)
    rel_unscaled = RelativeMultiHeadAttention(D, H, max_distance=4, scale=1.0).eval()
    torch.testing.assert_close(rel_default(x, x, x)[0], rel_same(x, x, x)[0])
    assert not torch.allclose(rel_default(x, x, x)[1], rel_unscaled(x, x, x)[1])


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_scale_is_a_clear_error(bad) -> None:
    with pytest.raises(ValueError, match="scale="):
        MultiHeadAttention(D, H, scale=bad)


@pytest.mark.parametrize("bad", [True, "1"])
def test_scale_of_the_wrong_type_is_a_type_error(bad) -> None:
    with pytest.raises(TypeError, match="scale must be a number"):
        MultiHeadAttention(D, H, scale=bad)
