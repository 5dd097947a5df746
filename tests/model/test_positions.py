"""Positions (lib.model.positions): what each scheme promises, and RoPE in low precision."""

from __future__ import annotations

import torch

from lib import DecoderOnlyLM, LMConfig, RotaryEmbedding, causal_mask


def test_rope_in_bfloat16_at_a_far_position_matches_float32() -> None:
    """Regression: the angles m·θ_i were computed in the module's dtype; in bfloat16 position 3001
    became 3008 and the output was off by 3.3 on inputs of magnitude <= 2.2."""
    torch.manual_seed(0)
    x = torch.randn(2, 4, 1, 64).clamp(-2.2, 2.2)
    positions = torch.tensor([3001])
    reference = RotaryEmbedding(64)(x, positions)  # float32 throughout
    low = RotaryEmbedding(64).to(torch.bfloat16)(x.to(torch.bfloat16), positions)
    assert low.dtype == torch.bfloat16
    assert (low.float() - reference).abs().max() < 0.05  # bfloat16 rounding of the output only


def test_rope_takes_an_offset_or_positions() -> None:
    rope, x = RotaryEmbedding(8), torch.randn(3, 5, 8)
    torch.testing.assert_close(rope(x, 7), rope(x, torch.arange(7, 12)))


def test_rope_scores_depend_only_on_the_offset() -> None:
    rope = RotaryEmbedding(16)
    q, k = torch.randn(16), torch.randn(16)
    at = lambda m, n: rope(q[None], torch.tensor([m])) @ rope(k[None], torch.tensor([n])).T  # noqa: E731
    torch.testing.assert_close(at(3, 1), at(103, 101), atol=1e-4, rtol=1e-4)


def test_a_rotary_lm_in_bfloat16_generates_like_float32_at_short_range() -> None:
    torch.manual_seed(0)
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 1, dropout=0.0, position="rotary")).eval()
    prompt = torch.randint(3, 20, (2, 6))
    logits32 = lm(prompt)
    logits16 = lm.to(torch.bfloat16)(prompt).float()
    assert (logits16 - logits32).abs().max() < 0.1


def test_relative_attention_weighs_values_and_relative_values_with_one_dropped_alpha() -> None:
    """Shaw et al.: ``z_i = Σ_j α_ij (v_j + a^V_ij)``, one α for both terms; with dropout, the dropped α."""
    import torch.nn.functional as F

    from lib import RelativeMultiHeadAttention
    from lib.model.masks import masked_softmax

    torch.manual_seed(0)
    layer = RelativeMultiHeadAttention(16, 2, max_distance=3, dropout=0.5).train()
    q, k, v = torch.randn(3, 2, 2, 6, 8).unbind(0)  # [B, H, T, d_head]
    torch.manual_seed(1)
    out, weights = layer.attend(q, k, v, None, True, need_weights=True)
    a_k, a_v = layer.relative(6, 6)
    scores = (q @ k.transpose(-2, -1) + torch.einsum("bhqd,qkd->bhqk", q, a_k)) / 8**0.5
    alpha = masked_softmax(scores, causal_mask(6))
    torch.manual_seed(1)
    dropped = F.dropout(alpha, 0.5)
    torch.testing.assert_close(weights, alpha)  # the weights returned are the softmax's, before dropout
    torch.testing.assert_close(out, dropped @ v + torch.einsum("bhqk,qkd->bhqd", dropped, a_v))
