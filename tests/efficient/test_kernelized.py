"""lib.efficient.kernelized: Performer's error falls with its features; Linformer is exact at k = T."""

import math

import pytest
import torch

import lib
from lib.efficient import LinformerProjection, performer_attention


def relative_error(out, ref):
    return ((out - ref).norm() / ref.norm()).item()


def test_performer_error_falls_with_features(qkv, full):
    q, k, v = qkv(B=1, H=2, T_q=64, T_k=64, d=16, requires_grad=False)
    q, k = 0.5 * q, 0.5 * k
    ref = full(q, k, v)

    def error(m):
        return sum(relative_error(performer_attention(q, k, v, m, seed=s), ref) for s in range(4)) / 4

    assert error(4096) < error(64) / 3
    assert error(4096) < 0.05


def test_performer_key_mask_and_errors(qkv):
    q, k, v = qkv(B=1, H=1, T_q=10, T_k=10, d=4, requires_grad=False)
    keys = torch.tensor([True] * 6 + [False] * 4)[None, None, None, :]
    out = performer_attention(q, k, v, 64, mask=keys)
    torch.testing.assert_close(out, performer_attention(q, k[..., :6, :], v[..., :6, :], 64))
    with pytest.raises(ValueError, match="key mask"):
        performer_attention(q, k, v, mask=lib.causal_mask(10))
    with pytest.raises(ValueError, match="n_features"):
        performer_attention(q, k, v, n_features=0)


def test_linformer_exact_at_full_rank_and_errors(qkv, full):
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
    with pytest.raises(ValueError, match="k=17"):  # more rows than positions: nothing to compress
        LinformerProjection(17, 16)


@pytest.mark.parametrize("T", [1, 5, 8, 13, 16])
def test_linformer_is_exact_at_k_equal_T_below_max_len(T, qkv, full):
    """Regression: with T_k < max_len the pooling rows beyond the sequence were empty, and their zero
    keys still took softmax mass (53 % relative error at T = k = 8, max_len = 16)."""
    q, k, v = qkv(B=2, H=2, T_q=T, T_k=T, d=16, requires_grad=False)
    proj = LinformerProjection(T, max_len=16).double()
    torch.testing.assert_close(proj(q, k, v), full(q, k, v))


def test_linformer_pools_segments_of_the_sequence_it_is_given(qkv):
    """Row r averages the r-th of k equal segments of *this* sequence, whatever max_len is: a short
    sequence gets what a Linformer made for its length gives, and no projected key is empty.
    (Equal segments: max_len a multiple of T; otherwise the segments' edges are shared by weight.)"""
    q, k, v = qkv(B=1, H=2, T_q=8, T_k=8, d=4, requires_grad=False)
    short = LinformerProjection(4, max_len=8).double()
    for max_len in (16, 24, 40):
        torch.testing.assert_close(LinformerProjection(4, max_len).double()(q, k, v), short(q, k, v))


def test_linformer_at_max_len_is_the_papers_formula(qkv):
    """At T = max_len, E and F are used as they are: softmax(Q (E K)ᵀ / √d) F V."""
    q, k, v = qkv(B=2, H=2, T_q=12, T_k=12, d=8, requires_grad=False)
    torch.manual_seed(0)
    proj = LinformerProjection(5, 12, init="random").double()
    ref = torch.softmax(q @ (proj.E @ k).transpose(-2, -1) / math.sqrt(8), dim=-1) @ (proj.F @ v)
    torch.testing.assert_close(proj(q, k, v), ref)
    assert proj.fit(proj.E, 12) is proj.E


def test_linformer_projected_keys_of_padding_only_take_no_mass(qkv):
    """A key mask zeros the masked keys; a projected key made of masked keys only is left out."""
    q, k, v = qkv(B=1, H=2, T_q=16, T_k=16, d=4, requires_grad=False)
    keys = torch.tensor([True] * 8 + [False] * 8)[None, None, None, :]
    out = LinformerProjection(8, 16).double()(q, k, v, mask=keys)
    # rows 0-3 average pairs of the first 8 keys; rows 4-7 hold padding only
    ref = LinformerProjection(4, 8).double()(q, k[..., :8, :], v[..., :8, :])
    torch.testing.assert_close(out, ref)
    nothing = torch.zeros(1, 1, 1, 16, dtype=torch.bool)
    assert torch.equal(LinformerProjection(8, 16).double()(q, k, v, mask=nothing), torch.zeros_like(out))


def test_linformer_gradients_reach_E_and_F_below_max_len(qkv):
    q, k, v = qkv(B=1, H=1, T_q=6, T_k=6, d=4, requires_grad=False)
    proj = LinformerProjection(3, 10, init="random").double()
    proj(q, k, v).sum().backward()
    assert proj.E.grad.abs().sum() > 0 and proj.F.grad.abs().sum() > 0
