"""lib's layers compute what PyTorch's own modules compute, once the weights are copied."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lib import (
    DecoderLayer,
    EncoderLayer,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)

ATOL = 1e-5


def copy_mha(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """nn.MultiheadAttention packs W^Q, W^K, W^V into one in_proj matrix."""
    w_q, w_k, w_v = theirs.in_proj_weight.chunk(3)
    b_q, b_k, b_v = theirs.in_proj_bias.chunk(3)
    with torch.no_grad():
        for proj, w, b in ((ours.q_proj, w_q, b_q), (ours.k_proj, w_k, b_k), (ours.v_proj, w_v, b_v)):
            proj.weight.copy_(w)
            proj.bias.copy_(b)
        ours.out_proj.weight.copy_(theirs.out_proj.weight)
        ours.out_proj.bias.copy_(theirs.out_proj.bias)


def copy_mha_to_torch(ours: MultiHeadAttention, theirs: nn.MultiheadAttention) -> None:
    """The other direction: lib's weights into PyTorch's module."""
    projections = (ours.q_proj, ours.k_proj, ours.v_proj)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([p.weight for p in projections]))
        theirs.in_proj_bias.copy_(torch.cat([p.bias for p in projections]))
        theirs.out_proj.weight.copy_(ours.out_proj.weight)
        theirs.out_proj.bias.copy_(ours.out_proj.bias)


def mha_grads(ours: MultiHeadAttention, theirs: nn.MultiheadAttention):
    """Pairs (ours, theirs) of gradients of the same weights."""
    g_w, g_b = theirs.in_proj_weight.grad.chunk(3), theirs.in_proj_bias.grad.chunk(3)
    pairs = []
    for i, proj in enumerate((ours.q_proj, ours.k_proj, ours.v_proj)):
        pairs += [(proj.weight.grad, g_w[i]), (proj.bias.grad, g_b[i])]
    return pairs + [
        (ours.out_proj.weight.grad, theirs.out_proj.weight.grad),
        (ours.out_proj.bias.grad, theirs.out_proj.bias.grad),
    ]


def copy_layer(ours, theirs) -> None:
    copy_mha(ours.self_attn, theirs.self_attn)
    if hasattr(theirs, "multihead_attn"):
        copy_mha(ours.cross_attn, theirs.multihead_attn)
    ours.ff.linear1.load_state_dict(theirs.linear1.state_dict())
    ours.ff.linear2.load_state_dict(theirs.linear2.state_dict())
    for name in ("norm1", "norm2", "norm3"):
        if hasattr(theirs, name):
            getattr(ours, name).load_state_dict(getattr(theirs, name).state_dict())


def assert_same_layer_grads(ours, theirs) -> None:
    """Every weight of a copied layer got the same gradient in lib as in PyTorch."""
    pairs = mha_grads(ours.self_attn, theirs.self_attn)
    if hasattr(theirs, "multihead_attn"):
        pairs += mha_grads(ours.cross_attn, theirs.multihead_attn)
    modules = [(ours.ff.linear1, theirs.linear1), (ours.ff.linear2, theirs.linear2)]
    modules += [(getattr(ours, n), getattr(theirs, n)) for n in ("norm1", "norm2", "norm3") if hasattr(theirs, n)]
    pairs += [(getattr(a, w).grad, getattr(b, w).grad) for a, b in modules for w in ("weight", "bias")]
    for g_ours, g_theirs in pairs:
        torch.testing.assert_close(g_ours, g_theirs, atol=1e-4, rtol=0)


def random_mask(*shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(*shape, generator=g) > 0.3
    mask[..., 0] = True  # no fully masked row: PyTorch gives NaN there
    return mask


@pytest.mark.parametrize("masked", [False, True])
def test_explicit_attention_matches_torch_sdpa(masked):
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8), torch.randn(2, 4, 7, 6)
    mask = random_mask(2, 1, 5, 7) if masked else None
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 4, 5), atol=ATOL, rtol=0)


def test_explicit_attention_custom_scale():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 4, 16), torch.randn(3, 6, 16), torch.randn(3, 6, 16)
    out, _ = scaled_dot_product_attention(q, k, v, scale=1.0)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, scale=1.0), atol=ATOL, rtol=0)


@pytest.mark.parametrize("direction", ["torch->lib", "lib->torch"])
@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "random"])
def test_multihead_attention_matches_torch(need_weights, mask_kind, direction):
    torch.manual_seed(0)
    B, T, d, H = 3, 6, 32, 4
    theirs = nn.MultiheadAttention(d, H, batch_first=True)
    ours = MultiHeadAttention(d, H)
    if direction == "torch->lib":
        copy_mha(ours, theirs)
    else:
        copy_mha_to_torch(ours, theirs)
    x, mem = torch.randn(B, T, d, requires_grad=True), torch.randn(B, T, d)
    tokens = torch.tensor([[5, 6, 7, 8, 9, 4], [5, 6, 7, 0, 0, 0], [5, 6, 7, 8, 0, 0]])
    mask = {
        "none": None,
        "causal": causal_mask(T),
        "padding": padding_mask(tokens, 0),
        "random": random_mask(B, H, T, T),
    }[mask_kind]
    torch_mask = None
    if mask is not None:  # torch: True = NOT allowed, and a 3-d mask is [B*H, T, T]
        torch_mask = ~mask.expand(B, H, T, T).reshape(B * H, T, T)
    expected, expected_w = theirs(x, mem, mem, attn_mask=torch_mask, average_attn_weights=False)
    grad_out = torch.randn(B, T, d)
    expected.backward(grad_out)
    expected_x_grad, x.grad = x.grad, None
    out, weights = ours(x, mem, mem, mask, need_weights=need_weights)
    torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)
    if need_weights:
        torch.testing.assert_close(weights, expected_w, atol=ATOL, rtol=0)
    else:
        assert weights is None
    out.backward(grad_out)  # and the same gradients, for input and weights
    torch.testing.assert_close(x.grad, expected_x_grad, atol=1e-4, rtol=0)
    for g_ours, g_theirs in mha_grads(ours, theirs):
        torch.testing.assert_close(g_ours, g_theirs, atol=1e-4, rtol=0)


def test_multihead_attention_without_bias_and_cross_lengths():
    torch.manual_seed(1)
    theirs = nn.MultiheadAttention(24, 3, bias=False, batch_first=True)
    ours = MultiHeadAttention(24, 3, bias=False)
    with torch.no_grad():
        w_q, w_k, w_v = theirs.in_proj_weight.chunk(3)
        ours.q_proj.weight.copy_(w_q), ours.k_proj.weight.copy_(w_k), ours.v_proj.weight.copy_(w_v)
        ours.out_proj.weight.copy_(theirs.out_proj.weight)
    q, kv = torch.randn(2, 4, 24), torch.randn(2, 9, 24)
    expected, _ = theirs(q, kv, kv)
    for need_weights in (True, False):
        out, _ = ours(q, kv, kv, need_weights=need_weights)
        torch.testing.assert_close(out, expected, atol=ATOL, rtol=0)


def test_fused_and_explicit_paths_agree_with_gradients():
    torch.manual_seed(0)
    mha = MultiHeadAttention(32, 4)
    x = torch.randn(2, 8, 32, requires_grad=True)
    mask = random_mask(2, 4, 8, 8, seed=3)
    mask[0, 1, 2] = False  # one fully masked row
    grads = []
    outs = []
    for need_weights in (True, False):
        x.grad = None
        out, _ = mha(x, x, x, mask, need_weights=need_weights)
        out.square().sum().backward()
        outs.append(out.detach())
        grads.append(x.grad.clone())
    torch.testing.assert_close(outs[0], outs[1], atol=ATOL, rtol=0)
    torch.testing.assert_close(grads[0], grads[1], atol=1e-4, rtol=0)
    for need_weights in (True, False):  # causal flag and causal mask agree too
        a, _ = mha(x, x, x, causal_mask(8), need_weights=need_weights)
        b, _ = mha(x, x, x, need_weights=need_weights, is_causal=True)
        torch.testing.assert_close(a, b, atol=ATOL, rtol=0)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("need_mask", [False, True])
def test_encoder_layer_matches_torch(norm_first, need_mask):
    torch.manual_seed(0)
    d, H, d_ff = 32, 4, 64
    theirs = nn.TransformerEncoderLayer(d, H, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ours = EncoderLayer(d, H, d_ff, dropout=0.0, norm_first=norm_first).eval()
    copy_layer(ours, theirs)
    x = torch.randn(3, 7, d)
    tokens = torch.tensor([[4] * 7, [4] * 5 + [0] * 2, [4] * 3 + [0] * 4])
    mask = padding_mask(tokens, 0) if need_mask else None
    torch_mask = None if mask is None else ~mask[:, 0, 0]
    expected = theirs(x, src_key_padding_mask=torch_mask)
    out = ours(x, mask)
    keep = tokens != 0  # torch's fast path may leave padded positions unspecified
    torch.testing.assert_close(out[keep], expected[keep], atol=ATOL, rtol=0)

    # Gradients, in training mode (dropout 0; no fast path): every weight's, and the input's.
    theirs.train(), ours.train()
    x.requires_grad_(True)
    grad_out = torch.randn_like(x) * keep[..., None]
    theirs(x, src_key_padding_mask=torch_mask).backward(grad_out)
    expected_x_grad, x.grad = x.grad, None
    ours(x, mask).backward(grad_out)
    torch.testing.assert_close(x.grad, expected_x_grad, atol=1e-4, rtol=0)
    assert_same_layer_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    torch.manual_seed(0)
    d, H, d_ff = 32, 4, 64
    theirs = nn.TransformerDecoderLayer(d, H, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    ours = DecoderLayer(d, H, d_ff, dropout=0.0, norm_first=norm_first).eval()
    copy_layer(ours, theirs)
    x, memory = torch.randn(2, 6, d), torch.randn(2, 9, d)
    src = torch.tensor([[4] * 9, [4] * 6 + [0] * 3])
    memory_mask = padding_mask(src, 0)
    expected = theirs(x, memory, tgt_mask=~causal_mask(6), memory_key_padding_mask=~memory_mask[:, 0, 0])
    out_mask = ours(x, memory, causal_mask(6), memory_mask)
    out_flag = ours(x, memory, memory_mask=memory_mask, is_causal=True)
    torch.testing.assert_close(out_mask, expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(out_flag, expected, atol=ATOL, rtol=0)

    theirs.train(), ours.train()  # gradients: dropout 0, no fast path
    x.requires_grad_(True), memory.requires_grad_(True)
    grad_out = torch.randn_like(x)
    theirs(x, memory, tgt_mask=~causal_mask(6), memory_key_padding_mask=~memory_mask[:, 0, 0]).backward(grad_out)
    expected_grads, x.grad, memory.grad = (x.grad, memory.grad), None, None
    ours(x, memory, memory_mask=memory_mask, is_causal=True).backward(grad_out)
    torch.testing.assert_close(x.grad, expected_grads[0], atol=1e-4, rtol=0)
    torch.testing.assert_close(memory.grad, expected_grads[1], atol=1e-4, rtol=0)
    assert_same_layer_grads(ours, theirs)


@pytest.mark.parametrize("norm_first", [False, True])
def test_whole_stack_matches_torch_transformer(norm_first):
    """Our Transformer's encoder-decoder stack equals nn.Transformer's with the same weights."""
    torch.manual_seed(0)
    config = TransformerConfig(
        11,
        13,
        d_model=32,
        n_heads=4,
        n_encoder_layers=2,
        n_decoder_layers=2,
        d_ff=64,
        dropout=0.0,
        norm_first=norm_first,
    )
    ours = Transformer(config).eval()
    theirs = nn.Transformer(32, 4, 2, 2, 64, dropout=0.0, batch_first=True, norm_first=norm_first).eval()
    for a, b in zip(ours.encoder_layers, theirs.encoder.layers):
        copy_layer(a, b)
    for a, b in zip(ours.decoder_layers, theirs.decoder.layers):
        copy_layer(a, b)
    if norm_first:
        ours.encoder_norm.load_state_dict(theirs.encoder.norm.state_dict())
        ours.decoder_norm.load_state_dict(theirs.decoder.norm.state_dict())
    else:  # nn.Transformer always ends in a final LayerNorm; a post-LN stack has none beyond norm2/norm3
        theirs.encoder.norm, theirs.decoder.norm = nn.Identity(), nn.Identity()
    src, tgt = torch.randint(1, 11, (3, 6)), torch.randint(1, 13, (3, 4))
    src[1, 4:] = 0  # padded sources: <pad> = 0 is masked as a key
    src[2, 2:] = 0
    x_src, x_tgt = ours.embed_tokens(src, ours.src_embed), ours.embed_tokens(tgt, ours.tgt_embed)
    pad = src == 0  # torch: True = ignore
    hidden = theirs(x_src, x_tgt, tgt_mask=~causal_mask(4), src_key_padding_mask=pad, memory_key_padding_mask=pad)
    logits = ours(src, tgt)  # its own padding mask and causal mask
    torch.testing.assert_close(logits, ours.out_proj(hidden), atol=1e-4, rtol=0)
